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
/// on the completion queue (`NSURLErrorCannotDecodeRawData` in
/// `AFURLRequestSerializationErrorDomain`), and no task is made.
extension HTTPSessionManager {
    /// GET with `Encodable` parameters and an optional download progress block.
    @discardableResult @preconcurrency
    public func get<Parameters: Encodable & Sendable>(_ URLString: String, parameters: Parameters?, encoder: any ParameterEncoder,
                                                      headers: [String: String]? = nil,
                                                      progress: (@Sendable (Progress) -> Void)? = nil,
                                                      success: (@Sendable (URLSessionDataTask, Any?) -> Void)?,
                                                      failure: (@Sendable (URLSessionDataTask?, Error) -> Void)?) -> URLSessionDataTask? {
        resumedTask(method: "GET", URLString, .encodable(parameters, encoder), headers, downloadProgress: progress, success, failure)
    }

    /// HEAD with `Encodable` parameters; the success block gets the task only.
    @discardableResult @preconcurrency
    public func head<Parameters: Encodable & Sendable>(_ URLString: String, parameters: Parameters?, encoder: any ParameterEncoder,
                                                       headers: [String: String]? = nil,
                                                       success: (@Sendable (URLSessionDataTask) -> Void)?,
                                                       failure: (@Sendable (URLSessionDataTask?, Error) -> Void)?) -> URLSessionDataTask? {
        resumedTask(method: "HEAD", URLString, .encodable(parameters, encoder), headers,
                    success.map { block in { @Sendable task, _ in block(task) } }, failure)
    }

    /// POST with `Encodable` parameters and an optional upload progress block.
    @discardableResult @preconcurrency
    public func post<Parameters: Encodable & Sendable>(_ URLString: String, parameters: Parameters?, encoder: any ParameterEncoder,
                                                       headers: [String: String]? = nil,
                                                       progress: (@Sendable (Progress) -> Void)? = nil,
                                                       success: (@Sendable (URLSessionDataTask, Any?) -> Void)?,
                                                       failure: (@Sendable (URLSessionDataTask?, Error) -> Void)?) -> URLSessionDataTask? {
        resumedTask(method: "POST", URLString, .encodable(parameters, encoder), headers, uploadProgress: progress, success, failure)
    }

    /// PUT with `Encodable` parameters.
    @discardableResult @preconcurrency
    public func put<Parameters: Encodable & Sendable>(_ URLString: String, parameters: Parameters?, encoder: any ParameterEncoder,
                                                      headers: [String: String]? = nil,
                                                      success: (@Sendable (URLSessionDataTask, Any?) -> Void)?,
                                                      failure: (@Sendable (URLSessionDataTask?, Error) -> Void)?) -> URLSessionDataTask? {
        resumedTask(method: "PUT", URLString, .encodable(parameters, encoder), headers, success, failure)
    }

    /// PATCH with `Encodable` parameters.
    @discardableResult @preconcurrency
    public func patch<Parameters: Encodable & Sendable>(_ URLString: String, parameters: Parameters?, encoder: any ParameterEncoder,
                                                        headers: [String: String]? = nil,
                                                        success: (@Sendable (URLSessionDataTask, Any?) -> Void)?,
                                                        failure: (@Sendable (URLSessionDataTask?, Error) -> Void)?) -> URLSessionDataTask? {
        resumedTask(method: "PATCH", URLString, .encodable(parameters, encoder), headers, success, failure)
    }

    /// DELETE with `Encodable` parameters.
    @discardableResult @preconcurrency
    public func delete<Parameters: Encodable & Sendable>(_ URLString: String, parameters: Parameters?, encoder: any ParameterEncoder,
                                                         headers: [String: String]? = nil,
                                                         success: (@Sendable (URLSessionDataTask, Any?) -> Void)?,
                                                         failure: (@Sendable (URLSessionDataTask?, Error) -> Void)?) -> URLSessionDataTask? {
        resumedTask(method: "DELETE", URLString, .encodable(parameters, encoder), headers, success, failure)
    }
}
