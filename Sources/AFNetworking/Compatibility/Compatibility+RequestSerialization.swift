import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(FoundationXML)
import FoundationXML
#endif

// AFNetworking 2.x spellings of the request serializers and multipart bodies,
// deprecated with `renamed:` and forwarding to the current API.

// MARK: - Request serialization

extension URLRequestSerialization {
    /// 2.7's `-requestBySerializingRequest:withParameters:error:` with its
    /// error out-parameter (as Swift 2 imported it): nil and `error` set on failure.
    @available(*, deprecated, renamed: "requestBySerializingRequest(_:withParameters:)")
    public func requestBySerializingRequest(_ request: URLRequest, withParameters parameters: Any?,
                                            error: UnsafeMutablePointer<NSError?>?) -> URLRequest? {
        do {
            return try requestBySerializingRequest(request, withParameters: parameters)
        } catch let thrown {
            error?.pointee = thrown as NSError
            return nil
        }
    }
}

extension HTTPRequestQueryStringSerializationStyle {
    /// Swift 2's spelling of `AFHTTPRequestQueryStringDefaultStyle`.
    @available(*, deprecated, renamed: "defaultStyle")
    public static var DefaultStyle: HTTPRequestQueryStringSerializationStyle { .defaultStyle }
}

extension HTTPRequestSerializer {
    /// 2.7's `HTTPShouldHandleCookies` property as Swift 2 spelled it.
    @available(*, deprecated, renamed: "httpShouldHandleCookies")
    public var HTTPShouldHandleCookies: Bool {
        get { httpShouldHandleCookies }
        set { httpShouldHandleCookies = newValue }
    }

    /// 2.7's `HTTPShouldUsePipelining` property as Swift 2 spelled it.
    @available(*, deprecated, renamed: "httpShouldUsePipelining")
    public var HTTPShouldUsePipelining: Bool {
        get { httpShouldUsePipelining }
        set { httpShouldUsePipelining = newValue }
    }

    /// 2.7's `HTTPRequestHeaders` property as Swift 2 spelled it.
    @available(*, deprecated, renamed: "httpRequestHeaders")
    public var HTTPRequestHeaders: [String: String] { httpRequestHeaders }

    /// 2.7's `HTTPMethodsEncodingParametersInURI` property as Swift 2 spelled it.
    @available(*, deprecated, renamed: "httpMethodsEncodingParametersInURI")
    public var HTTPMethodsEncodingParametersInURI: Set<String> {
        get { httpMethodsEncodingParametersInURI }
        set { httpMethodsEncodingParametersInURI = newValue }
    }

    // 2.7's -valueForHTTPHeaderField:, -setQueryStringSerializationWithStyle:,
    // -setQueryStringSerializationWithBlock:, -requestWithMethod:…,
    // -multipartFormRequestWithMethod:… and -requestWithMultipartFormRequest:…
    // are declared `open` in the class body (Serialization/HTTPRequestSerializer.swift),
    // so that a subclass can override them: Swift cannot override a member
    // declared in an extension.
}

extension JSONRequestSerializer {
    /// 2.7's `+serializerWithWritingOptions:`.
    @available(*, deprecated, renamed: "init(writingOptions:)")
    public static func serializerWithWritingOptions(_ writingOptions: JSONSerialization.WritingOptions) -> JSONRequestSerializer {
        JSONRequestSerializer(writingOptions: writingOptions)
    }
}

extension PropertyListRequestSerializer {
    /// 2.7's `+serializerWithFormat:writeOptions:`.
    @available(*, deprecated, renamed: "init(format:writeOptions:)")
    public static func serializerWithFormat(_ format: PropertyListSerialization.PropertyListFormat,
                                            writeOptions: PropertyListSerialization.WriteOptions) -> PropertyListRequestSerializer {
        PropertyListRequestSerializer(format: format, writeOptions: writeOptions)
    }
}

extension MultipartFormData {
    /// 2.7's `-appendPartWithFileURL:name:error:` as Swift 2 imported it.
    @available(*, deprecated, renamed: "appendPart(withFileURL:name:)")
    public func appendPartWithFileURL(_ fileURL: URL, name: String) throws {
        try appendPart(withFileURL: fileURL, name: name)
    }

    /// 2.7's `-appendPartWithFileURL:name:fileName:mimeType:error:` as Swift 2 imported it.
    @available(*, deprecated, renamed: "appendPart(withFileURL:name:fileName:mimeType:)")
    public func appendPartWithFileURL(_ fileURL: URL, name: String, fileName: String, mimeType: String) throws {
        try appendPart(withFileURL: fileURL, name: name, fileName: fileName, mimeType: mimeType)
    }

    /// 2.7's `-appendPartWithInputStream:name:fileName:length:mimeType:`.
    @available(*, deprecated, renamed: "appendPart(with:name:fileName:length:mimeType:)")
    public func appendPartWithInputStream(_ inputStream: InputStream?, name: String, fileName: String,
                                          length: Int64, mimeType: String) {
        appendPart(with: inputStream, name: name, fileName: fileName, length: length, mimeType: mimeType)
    }

    /// 2.7's `-appendPartWithFileData:name:fileName:mimeType:`.
    @available(*, deprecated, renamed: "appendPart(withFileData:name:fileName:mimeType:)")
    public func appendPartWithFileData(_ data: Data, name: String, fileName: String, mimeType: String) {
        appendPart(withFileData: data, name: name, fileName: fileName, mimeType: mimeType)
    }

    /// 2.7's `-appendPartWithFormData:name:`.
    @available(*, deprecated, renamed: "appendPart(withForm:name:)")
    public func appendPartWithFormData(_ data: Data, name: String) {
        appendPart(withForm: data, name: name)
    }

    /// 2.7's `-appendPartWithHeaders:body:`.
    @available(*, deprecated, renamed: "appendPart(withHeaders:body:)")
    public func appendPartWithHeaders(_ headers: [String: String]?, body: Data) {
        appendPart(withHeaders: headers, body: body)
    }

    /// 2.7's `-throttleBandwidthWithPacketSize:delay:`.
    @available(*, deprecated, renamed: "throttleBandwidth(withPacketSize:delay:)")
    public func throttleBandwidthWithPacketSize(_ numberOfBytes: Int, delay: TimeInterval) {
        throttleBandwidth(withPacketSize: numberOfBytes, delay: delay)
    }
}
