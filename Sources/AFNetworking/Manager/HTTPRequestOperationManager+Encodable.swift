import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The verbs with `Encodable` parameters (Alamofire's `parameters:encoder:`):
/// the request serializer builds the request without parameters (URL, method,
/// default headers), `encoder` encodes the value into it
/// (`JSONParameterEncoder` as a JSON body, `URLEncodedFormParameterEncoder`
/// as form fields in the query or body by the serializer's
/// `httpMethodsEncodingParametersInURI`), then `headers` go over it. A value
/// the encoder cannot represent fails the call through `failure(nil, error)`
/// (`NSURLErrorCannotDecodeRawData` in `AFURLRequestSerializationErrorDomain`),
/// and nothing is sent.
extension HTTPRequestOperationManager {
    /// GET with `Encodable` parameters.
    @discardableResult @preconcurrency
    public func get<Parameters: Encodable & Sendable>(_ URLString: String, parameters: Parameters?, encoder: any ParameterEncoder,
                                                      headers: [String: String]? = nil,
                                                      success: HTTPRequestOperation.SuccessBlock?,
                                                      failure: FailureBlock?) -> HTTPRequestOperation? {
        enqueue(method: "GET", URLString, .encodable(parameters, encoder), headers, success, failure)
    }

    /// HEAD with `Encodable` parameters; the success block gets the operation only.
    @discardableResult @preconcurrency
    public func head<Parameters: Encodable & Sendable>(_ URLString: String, parameters: Parameters?, encoder: any ParameterEncoder,
                                                       headers: [String: String]? = nil,
                                                       success: (@Sendable (HTTPRequestOperation) -> Void)?,
                                                       failure: FailureBlock?) -> HTTPRequestOperation? {
        enqueue(method: "HEAD", URLString, .encodable(parameters, encoder), headers,
                success.map { block in { @Sendable operation, _ in block(operation) } }, failure)
    }

    /// POST with `Encodable` parameters.
    @discardableResult @preconcurrency
    public func post<Parameters: Encodable & Sendable>(_ URLString: String, parameters: Parameters?, encoder: any ParameterEncoder,
                                                       headers: [String: String]? = nil,
                                                       success: HTTPRequestOperation.SuccessBlock?,
                                                       failure: FailureBlock?) -> HTTPRequestOperation? {
        enqueue(method: "POST", URLString, .encodable(parameters, encoder), headers, success, failure)
    }

    /// PUT with `Encodable` parameters.
    @discardableResult @preconcurrency
    public func put<Parameters: Encodable & Sendable>(_ URLString: String, parameters: Parameters?, encoder: any ParameterEncoder,
                                                      headers: [String: String]? = nil,
                                                      success: HTTPRequestOperation.SuccessBlock?,
                                                      failure: FailureBlock?) -> HTTPRequestOperation? {
        enqueue(method: "PUT", URLString, .encodable(parameters, encoder), headers, success, failure)
    }

    /// PATCH with `Encodable` parameters.
    @discardableResult @preconcurrency
    public func patch<Parameters: Encodable & Sendable>(_ URLString: String, parameters: Parameters?, encoder: any ParameterEncoder,
                                                        headers: [String: String]? = nil,
                                                        success: HTTPRequestOperation.SuccessBlock?,
                                                        failure: FailureBlock?) -> HTTPRequestOperation? {
        enqueue(method: "PATCH", URLString, .encodable(parameters, encoder), headers, success, failure)
    }

    /// DELETE with `Encodable` parameters.
    @discardableResult @preconcurrency
    public func delete<Parameters: Encodable & Sendable>(_ URLString: String, parameters: Parameters?, encoder: any ParameterEncoder,
                                                         headers: [String: String]? = nil,
                                                         success: HTTPRequestOperation.SuccessBlock?,
                                                         failure: FailureBlock?) -> HTTPRequestOperation? {
        enqueue(method: "DELETE", URLString, .encodable(parameters, encoder), headers, success, failure)
    }
}
