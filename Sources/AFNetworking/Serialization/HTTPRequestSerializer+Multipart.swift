import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// The work of `multipartFormRequest(withMethod:urlString:parameters:constructingBodyWith:)`
// and `request(withMultipartForm:writingStreamContentsToFile:completionHandler:)`,
// which are declared `open` in the class body (HTTPRequestSerializer.swift)
// because Swift cannot override a member declared in an extension.
extension HTTPRequestSerializer {
    /// `multipartFormRequest(withMethod:urlString:parameters:constructingBodyWith:)`.
    func makeMultipartFormRequest(withMethod method: String, urlString: String, parameters: [String: Any]?,
                                  constructingBodyWith block: (@Sendable (MultipartFormData) throws -> Void)?) throws -> URLRequest {
        let upper = method.uppercased()
        guard upper != "GET", upper != "HEAD" else {
            throw requestSerializationError(code: NSURLErrorUnsupportedURL,
                                            description: "A multipart form cannot be sent with \(upper)")
        }
        let request = try self.request(withMethod: method, urlString: urlString, parameters: nil)
        let formData = StreamingMultipartFormData(stringEncoding: .utf8)

        if let parameters = parameters {
            // Refused rather than sent as some `description` (as the query string and form are).
            if let reason = QueryStringEncoding.unrepresentable(parameters) {
                throw requestSerializationError(code: NSURLErrorCannotDecodeRawData,
                                                description: "The parameters cannot be written as form fields: \(reason)", request: request)
            }
            for pair in QueryStringEncoding.pairs(key: nil, value: parameters) {
                let data: Data
                switch pair.value {
                case let bytes as Data: data = bytes
                case nil: data = Data()
                case let value?:
                    guard let encoded = QueryStringEncoding.describe(value).data(using: stringEncoding) else {
                        throw requestSerializationError(code: NSURLErrorCannotDecodeRawData,
                                                        description: "The form field \(pair.field) cannot be represented in \(TextEncoding.name(of: stringEncoding))",
                                                        request: request)
                    }
                    data = encoded
                }
                formData.appendPart(withForm: data, name: pair.field)
            }
            // A field name the form refused (a CR, LF or NUL): the block is not run.
            if let error = formData.problemError(for: request) { throw error }
        }
        try block?(formData)
        // What an append method that cannot throw refused (see `problem`).
        if let error = formData.problemError(for: request) { throw error }
        return formData.requestByFinalizing(request)
    }

    /// `request(withMultipartForm:writingStreamContentsToFile:completionHandler:)`.
    func makeRequest(withMultipartForm request: URLRequest, writingStreamContentsToFile fileURL: URL,
                     completionHandler handler: (@Sendable (Error?) -> Void)?) -> URLRequest {
        var stripped = request
        stripped.httpBodyStream = nil
        // A copy, so the caller's request keeps an unread stream.
        let source = (request.httpBodyStream as? MultipartBodyStream)?.copy() as? InputStream ?? request.httpBodyStream
        let box = TransferBox(source: source, handler: handler)
        DispatchQueue.global().async {
            let error = MultipartFileWriter.write(box.source, to: fileURL)
            DispatchQueue.main.async { box.handler?(error) }
        }
        return stripped
    }
}

/// Hands the stream to the copying queue and the handler to the main queue.
// @unchecked: `source` (an InputStream, not Sendable) is only ever read by the copying queue; both fields are `let`.
private final class TransferBox: @unchecked Sendable {
    let source: InputStream?
    let handler: (@Sendable (Error?) -> Void)?
    init(source: InputStream?, handler: (@Sendable (Error?) -> Void)?) {
        self.source = source
        self.handler = handler
    }
}

/// Copies a body stream to a file in fixed-size chunks.
enum MultipartFileWriter {
    static let chunkSize = 64 * 1024

    static func write(_ input: InputStream?, to fileURL: URL) -> Error? {
        guard let input = input else {
            return requestSerializationError(code: NSURLErrorBadURL, description: "The request has no body stream to write")
        }
        guard fileURL.isFileURL, let output = OutputStream(url: fileURL, append: false) else {
            return requestSerializationError(code: NSURLErrorBadURL, description: "Expected URL to be a file URL")
        }
        input.open()
        output.open()
        defer {
            input.close()
            output.close()
        }
        var buffer = [UInt8](repeating: 0, count: chunkSize)
        while true {
            let read = buffer.withUnsafeMutableBufferPointer { pointer -> Int in
                guard let base = pointer.baseAddress else { return -1 }
                return input.read(base, maxLength: chunkSize)
            }
            if read < 0 {
                return input.streamError ?? requestSerializationError(code: NSURLErrorCannotDecodeRawData, description: "Reading the body failed")
            }
            if read == 0 { return nil }
            var offset = 0
            while offset < read {
                let written = buffer.withUnsafeBufferPointer { pointer -> Int in
                    guard let base = pointer.baseAddress else { return -1 }
                    return output.write(base + offset, maxLength: read - offset)
                }
                if written <= 0 {
                    return output.streamError ?? requestSerializationError(code: NSURLErrorCannotWriteToFile, description: "Writing the body failed")
                }
                offset += written
            }
        }
    }
}

extension HTTPRequestSerializer {
    /// A manager's multipart parameters as form fields: a dictionary, or nil.
    /// Anything else throws rather than being dropped without a word.
    func formFields(from parameters: Any?) throws -> [String: Any]? {
        guard let parameters else { return nil }
        guard let fields = parameters as? [String: Any] else {
            throw requestSerializationError(code: NSURLErrorCannotDecodeRawData,
                                            description: "Multipart form parameters must be a dictionary, not \(type(of: parameters))")
        }
        return fields
    }
}
