@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What `cancel(byProducingResumeData:)` hands out and
/// `downloadTask(withResumeData:…)` takes: this package's own format (JSON,
/// opaque to callers; not Apple's property list). It names the request, the
/// entity's validator and the partial file in the temporary directory, so a
/// download continues in any manager and in a later process while that file
/// exists.
struct DownloadResumeData: Codable, Equatable {
    static let formatName = "org.afnetworking-linux.download-resume-data"
    static let currentVersion = 1

    var format = DownloadResumeData.formatName
    var version = DownloadResumeData.currentVersion
    var url: String
    /// The request's header fields, without Range / If-Range.
    var headers: [String: String]
    var timeoutInterval: Double
    /// The entity's ETag, else its Last-Modified: sent as If-Range.
    var validator: String
    var partialFilePath: String
    var bytesWritten: Int64
    /// The entity's full length when the server said it.
    var expectedLength: Int64?

    /// The data, or nil when `download` cannot be resumed: a GET whose
    /// response (200 or 206) carried a validator and no content coding, with
    /// at least one byte of the entity in its partial file.
    static func make(request: URLRequest?, response: ReceivedResponse?, earlier: DownloadResumeData?,
                     partialFile: URL, bytesWritten: Int64) -> DownloadResumeData? {
        guard let request, let url = request.url, (request.httpMethod ?? "GET").uppercased() == "GET",
              let response, response.statusCode == 200 || response.statusCode == 206, bytesWritten > 0,
              ResumeRules.canContinue(response) else { return nil }
        // The caller's own Range: the file holds a part from some offset on,
        // which a resume from its length would splice wrongly.
        if earlier == nil, request.value(forHTTPHeaderField: "Range") != nil { return nil }
        let validator = ResumeRules.ifRangeValidator(etag: response.value(forField: "etag"), lastModified: response.value(forField: "last-modified"))
            ?? (response.statusCode == 206 ? earlier?.validator : nil)
        guard let validator else { return nil }
        var headers = request.allHTTPHeaderFields ?? [:]
        for name in headers.keys where ["range", "if-range"].contains(name.lowercased()) { headers[name] = nil }
        let expected: Int64? = response.statusCode == 206
            ? ResumeRules.completeLength(of: response)
            : (response.expectedContentLength >= 0 && response.value(forField: "content-encoding") == nil ? response.expectedContentLength : nil)
        return DownloadResumeData(url: url.absoluteString, headers: headers, timeoutInterval: request.timeoutInterval,
                                  validator: validator, partialFilePath: partialFile.path, bytesWritten: bytesWritten,
                                  expectedLength: expected)
    }

    /// Reads resume data; nil for data this package did not make or that is damaged.
    static func decode(_ data: Data) -> DownloadResumeData? {
        guard let decoded = try? JSONDecoder().decode(DownloadResumeData.self, from: data),
              decoded.format == formatName, decoded.version == currentVersion,
              let url = URL(string: decoded.url), url.scheme != nil, decoded.bytesWritten > 0,
              DownloadFile.isTemporaryDownload(URL(fileURLWithPath: decoded.partialFilePath)) else { return nil }
        return decoded
    }

    func encoded() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return (try? encoder.encode(self)) ?? Data()
    }

    /// The request that continues the download: the original one, asking for
    /// the bytes after those already written, if the entity is unchanged.
    var request: URLRequest? {
        guard let url = URL(string: url) else { return nil }
        var request = URLRequest(url: url)
        request.timeoutInterval = timeoutInterval
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        request.setValue("bytes=\(bytesWritten)-", forHTTPHeaderField: "Range")
        request.setValue(validator, forHTTPHeaderField: "If-Range")
        return request
    }

    /// The error a task reports for resume data it cannot use.
    static func unusableError(url: URL?, reason: String) -> NSError {
        TransportErrors.make(NSURLErrorCannotDecodeRawData, url: url, underlying: nil,
                             description: "The resume data cannot be used: \(reason).")
    }
}

/// The files download tasks write: a fresh one in `NSTemporaryDirectory()`
/// per download, kept there after a failure that produced resume data.
enum DownloadFile {
    static let prefix = "AFNetworking-Download-"
    static let suffix = ".tmp"

    static var directory: URL { URL(fileURLWithPath: NSTemporaryDirectory(), isDirectory: true) }

    /// Creates an empty temporary file for a new download.
    static func create() throws -> (URL, PartialFileOutputStream) {
        sweepAbandonedOnce()
        let url = directory.appendingPathComponent(prefix + UUID().uuidString + suffix)
        let descriptor = open(url.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, FileModes.partial)
        guard descriptor >= 0 else { throw posixError(errno, path: url.path, action: "create") }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw posixError(errno, path: url.path, action: "create") }
        // Opened again at the first byte of the body and closed at the end.
        return (url, PartialFileOutputStream(path: url.path, offset: 0, identity: PartialFileOutputStream.Identity(info), exclusive: true))
    }

    /// Takes over the partial file of `resume`: renamed to a fresh name first
    /// (so two tasks resumed from the same data never write one file — the
    /// second finds it gone), then opened at the end of the bytes the resume
    /// data counts (anything after them was never confirmed).
    static func reopen(_ resume: DownloadResumeData) -> Result<(URL, PartialFileOutputStream), NSError> {
        sweepAbandonedOnce(sparing: resume.partialFilePath)
        let requestURL = URL(string: resume.url)
        let claimed = directory.appendingPathComponent(prefix + UUID().uuidString + suffix)
        guard rename(resume.partialFilePath, claimed.path) == 0 else {
            return .failure(DownloadResumeData.unusableError(url: requestURL, reason: "its partial file is gone"))
        }
        let descriptor = open(claimed.path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC)
        var info = stat()
        // Only a plain file of ours, with one name, at least as long as recorded.
        guard descriptor >= 0, fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_uid == geteuid(),
              info.st_nlink == 1, Int64(info.st_size) >= resume.bytesWritten,
              ftruncate(descriptor, off_t(resume.bytesWritten)) == 0 else {
            if descriptor >= 0 { close(descriptor) }
            remove(claimed)
            return .failure(DownloadResumeData.unusableError(url: requestURL, reason: "its partial file is not the one it describes"))
        }
        close(descriptor)
        // Opened again at the first byte of the body, only if it is still this file.
        return .success((claimed, PartialFileOutputStream(path: claimed.path, offset: resume.bytesWritten,
                                                          identity: PartialFileOutputStream.Identity(info), exclusive: true)))
    }

    /// Whether `url` names a file this package would have made: resume data
    /// never makes it truncate or append to anything else.
    static func isTemporaryDownload(_ url: URL) -> Bool {
        let name = url.lastPathComponent
        return url.deletingLastPathComponent().standardizedFileURL.path == directory.standardizedFileURL.path
            && name.hasPrefix(prefix) && name.hasSuffix(suffix) && !name.contains("/")
    }

    static func remove(_ url: URL) {
        try? FileManager.default.removeItem(at: url)
    }

    private static func posixError(_ code: Int32, path: String, action: String) -> NSError {
        NSError(domain: NSURLErrorDomain, code: NSURLErrorCannotCreateFile, userInfo: [
            NSLocalizedDescriptionKey: "Cannot \(action) the download file \(path).",
            NSFilePathErrorKey: path,
            NSUnderlyingErrorKey: NSError(domain: NSPOSIXErrorDomain, code: Int(code)),
        ])
    }
}
