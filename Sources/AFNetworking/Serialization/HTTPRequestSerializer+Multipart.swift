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

/// Copies a body stream to a file in fixed-size chunks. The copy goes to a
/// temporary file beside the destination, which replaces the destination
/// (rename(2), one step) only once the whole body is written and synced: a
/// copy that fails leaves an existing file as it was and no partial file
/// behind. (Opening the destination truncated it first, and a failure left a
/// partial body there.) As rename(2) does, a symbolic link at the
/// destination is itself replaced, not the file it names.
enum MultipartFileWriter {
    static let chunkSize = 64 * 1024

    static func write(_ input: InputStream?, to fileURL: URL) -> Error? {
        guard let input = input else {
            return requestSerializationError(code: NSURLErrorBadURL, description: "The request has no body stream to write")
        }
        guard fileURL.isFileURL else {
            return requestSerializationError(code: NSURLErrorBadURL, description: "Expected URL to be a file URL")
        }
        let destination = fileURL.path
        let directory = fileURL.deletingLastPathComponent().path
        // Hidden, unique, in the destination's directory (so rename(2) stays
        // on one file system), and never someone else's file (O_EXCL, O_NOFOLLOW).
        let temporary = directory + "/." + fileURL.lastPathComponent + ".afn-\(getpid())-\(UInt32.random(in: .min ... .max)).tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o666)
        guard descriptor >= 0 else {
            return fileError("Cannot create a temporary file beside \(destination)", code: errno, path: temporary)
        }
        var failure = copy(input, into: descriptor, path: temporary)
        if failure == nil && fsync(descriptor) != 0 {
            failure = fileError("Cannot write \(temporary)", code: errno, path: temporary)
        }
        close(descriptor)
        if failure == nil && rename(temporary, destination) != 0 {
            failure = fileError("Cannot move \(temporary) to \(destination)", code: errno, path: destination)
        }
        if failure != nil { unlink(temporary) }
        return failure
    }

    /// Reads `input` to its end into `descriptor`: nil, or the error that stopped the copy.
    private static func copy(_ input: InputStream, into descriptor: Int32, path: String) -> Error? {
        input.open()
        defer { input.close() }
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
                    return Foundation.write(descriptor, base + offset, read - offset)
                }
                if written < 0 && errno == EINTR { continue }
                if written <= 0 {
                    // write(2) returns 0 only for nothing to write; never loop on it.
                    return fileError("Cannot write \(path)", code: written < 0 ? errno : EIO, path: path)
                }
                offset += written
            }
        }
    }

    /// `NSURLErrorCannotWriteToFile` with the POSIX error underneath.
    private static func fileError(_ description: String, code: Int32, path: String) -> NSError {
        let posix = NSError(domain: NSPOSIXErrorDomain, code: Int(code), userInfo: [NSFilePathErrorKey: path])
        return requestSerializationError(code: NSURLErrorCannotWriteToFile,
                                         description: "\(description): \(String(cString: strerror(code)))", underlying: posix)
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
