@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Collects parts for `HTTPRequestSerializer.multipartFormRequest(…)` and turns them
/// into a request with a `MultipartBodyStream` body.
final class StreamingMultipartFormData: MultipartFormData {
    let boundary: String
    let stringEncoding: String.Encoding
    private(set) var parts: [MultipartBodyPart] = []
    /// The first part that could not be appended as given. The append methods
    /// that do not throw (2.7's signatures) record it here instead of sending
    /// something else, and `multipartFormRequest` throws it once the block
    /// has run; the part itself is left out.
    private(set) var problem: NSError?
    private var packetSize = Int.max
    private var delay: TimeInterval = 0

    init(stringEncoding: String.Encoding = .utf8, boundary: String = StreamingMultipartFormData.makeBoundary()) {
        self.stringEncoding = stringEncoding
        self.boundary = boundary
    }

    /// `Boundary+` and 16 random hex digits, the shape 2.7 uses.
    static func makeBoundary() -> String {
        return String(format: "Boundary+%08X%08X", UInt32.random(in: .min ... .max), UInt32.random(in: .min ... .max))
    }

    func appendPart(withFileURL fileURL: URL, name: String) throws {
        try appendPart(withFileURL: fileURL, name: name, fileName: fileURL.lastPathComponent,
                       mimeType: MIMETypes.mimeType(forPathExtension: fileURL.pathExtension))
    }

    func appendPart(withFileURL fileURL: URL, name: String, fileName: String, mimeType: String) throws {
        guard fileURL.isFileURL else {
            throw requestSerializationError(code: NSURLErrorBadURL, description: "Expected URL to be a file URL")
        }
        let path = fileURL.path
        // Links followed, as reading the part will: the size announced is the target's.
        let size: Int64
        switch BodyFile.kind(atPath: path) {
        case .failure(let error):
            throw requestSerializationError(code: NSURLErrorBadURL, description: "File URL not reachable.", underlying: error)
        case .success(.directory):
            throw requestSerializationError(code: NSURLErrorBadURL, description: "File URL is a directory.")
        case .success(.other):
            // A FIFO or device has no length to announce in the body's Content-Length.
            throw requestSerializationError(code: NSURLErrorBadURL, description: "File URL is not a regular file.")
        case .success(.regular(let length)):
            size = length
        }
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw requestSerializationError(code: NSURLErrorNoPermissionsToReadFile, description: "File URL is not readable.")
        }
        // This one can throw: the problem is the caller's at once.
        if let refused = Self.partProblem(name: name, fileName: fileName, mimeType: mimeType) { throw refused }
        parts.append(MultipartBodyPart(headers: fileHeaders(name: name, fileName: fileName, mimeType: mimeType),
                                       source: .file(fileURL), bodyLength: size))
    }

    func appendPart(with inputStream: InputStream?, name: String, fileName: String, length: Int64, mimeType: String) {
        // A negative length (-1 for "unknown") is refused, not sent chunked:
        // the whole body's Content-Length would be unknown (many servers
        // refuse a chunked multipart upload) and the part's end could not be
        // checked against anything. 2.7 announced it as a huge unsigned
        // length; before, it became an empty part without a word.
        guard length >= 0 else {
            record(requestSerializationError(code: NSURLErrorBadURL,
                                             description: "The input stream part \"\(RequestValidation.printable(name))\" has the length \(length); a multipart part needs its exact length in bytes"))
            return
        }
        if let refused = Self.partProblem(name: name, fileName: fileName, mimeType: mimeType) { return record(refused) }
        parts.append(MultipartBodyPart(headers: fileHeaders(name: name, fileName: fileName, mimeType: mimeType),
                                       source: .stream(inputStream), bodyLength: length))
    }

    func appendPart(withFileData data: Data, name: String, fileName: String, mimeType: String) {
        if let refused = Self.partProblem(name: name, fileName: fileName, mimeType: mimeType) { return record(refused) }
        parts.append(MultipartBodyPart(headers: fileHeaders(name: name, fileName: fileName, mimeType: mimeType),
                                       source: .data(data), bodyLength: Int64(data.count)))
    }

    func appendPart(withForm data: Data, name: String) {
        if let refused = Self.partProblem(name: name, fileName: nil, mimeType: nil) { return record(refused) }
        let headers = [("Content-Disposition", MultipartBodyPart.contentDisposition(name: name, fileName: nil))]
        parts.append(MultipartBodyPart(headers: headers, source: .data(data), bodyLength: Int64(data.count)))
    }

    func appendPart(withHeaders headers: [String: String]?, body: Data) {
        // Sorted so the body, and so Content-Length tests, are deterministic.
        let ordered = (headers ?? [:]).sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        if let refused = Self.headerProblem(in: ordered) { return record(refused) }
        parts.append(MultipartBodyPart(headers: ordered, source: .data(body), bodyLength: Int64(body.count)))
    }

    func throttleBandwidth(withPacketSize numberOfBytes: Int, delay: TimeInterval) {
        // No packet size, or a delay that is negative or not a number of
        // seconds, names no rate: no throttling. (A packet size of 0 became
        // 1 byte per read, a few bytes a second: an upload that never ends;
        // 2.7 read 0 bytes and sent an empty body.)
        guard numberOfBytes > 0, delay >= 0, delay.isFinite else {
            packetSize = Int.max
            self.delay = 0
            return
        }
        packetSize = numberOfBytes
        self.delay = delay
    }

    /// Keeps the first problem: the one met first in the caller's block.
    private func record(_ error: NSError) {
        if problem == nil { problem = error }
    }

    /// `problem` as `multipartFormRequest` throws it, naming `request`.
    func problemError(for request: URLRequest) -> NSError? {
        problem.map { requestSerializationError(code: $0.code, description: $0.localizedDescription, request: request) }
    }

    private func fileHeaders(name: String, fileName: String, mimeType: String) -> [(String, String)] {
        return [("Content-Disposition", MultipartBodyPart.contentDisposition(name: name, fileName: fileName)),
                ("Content-Type", mimeType)]
    }

    /// `request` with the body stream and multipart headers; unchanged when no part was added.
    func requestByFinalizing(_ request: URLRequest) -> URLRequest {
        guard !parts.isEmpty else { return request }
        let stream = MultipartBodyStream(boundary: boundary, parts: parts)
        stream.numberOfBytesInPacket = packetSize
        stream.delay = delay
        var finalized = request
        finalized.httpBody = nil
        finalized.httpBodyStream = stream
        finalized.setValue("multipart/form-data; boundary=\(boundary)", forHTTPHeaderField: "Content-Type")
        finalized.setValue(String(stream.contentLength), forHTTPHeaderField: "Content-Length")
        return finalized
    }
}
