@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The on-disk state of a download that survives the process: the partial
/// file (`<destination>.partial`) and a small sidecar (`<destination>.partial.json`)
/// naming the URL, the entity's validator and its full length.
final class ResumableFile: @unchecked Sendable {
    // @unchecked: `prepare` runs before the operation starts; `record` and
    // `complete` run on the operation's response writer queue, one at a time.
    struct Sidecar: Codable, Equatable {
        var url: String
        var etag: String?
        var lastModified: String?
        var expectedLength: Int64?
    }

    let destination: URL
    let partial: URL
    let sidecarURL: URL
    private var sidecar: Sidecar

    init(destination: URL, url: URL) {
        self.destination = destination
        partial = URL(fileURLWithPath: destination.path + ".partial")
        sidecarURL = URL(fileURLWithPath: destination.path + ".partial.json")
        sidecar = Sidecar(url: url.absoluteString)
    }

    /// Looks at the partial file and returns the request to send: ranged with
    /// `If-Range` when an earlier process left a usable partial file, plain
    /// (from zero) otherwise. The file is created here but not kept open: the
    /// stream opens it at the body's first byte and closes it at the end.
    /// Throws when the file cannot be opened, or another download is writing
    /// to it right now (it holds the file's lock).
    func prepare(_ request: URLRequest) throws -> (URLRequest, PartialFileOutputStream) {
        let descriptor = open(partial.path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, FileModes.partial)
        guard descriptor >= 0 else {
            throw NSError(domain: NSPOSIXErrorDomain, code: Int(errno), userInfo: [
                NSLocalizedDescriptionKey: "Cannot open \(partial.path) for writing.", NSFilePathErrorKey: partial.path,
            ])
        }
        defer { close(descriptor) }
        // Neither the size nor a truncation may come from under a running writer.
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let error = PartialFileOutputStream.error(errno, "Another download is writing to \(partial.path).")
            var info = error.userInfo
            info[NSFilePathErrorKey] = partial.path
            throw NSError(domain: error.domain, code: error.code, userInfo: info)
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            throw NSError(domain: NSPOSIXErrorDomain, code: Int(errno), userInfo: [NSFilePathErrorKey: partial.path])
        }
        var size = Int64(info.st_size)
        var ranged = request
        let earlier = (try? Data(contentsOf: sidecarURL)).flatMap { try? JSONDecoder().decode(Sidecar.self, from: $0) }
        let validator = ResumeRules.ifRangeValidator(etag: earlier?.etag, lastModified: earlier?.lastModified)
        let usable = earlier?.url == sidecar.url && validator != nil && size > 0
            && (earlier?.expectedLength).map { size <= $0 } ?? true
        if usable, let earlier, let validator {
            sidecar = earlier
            ranged.setValue("bytes=\(size)-", forHTTPHeaderField: "Range")
            ranged.setValue(validator, forHTTPHeaderField: "If-Range")
        } else {
            // Nothing to continue from (or a partial file longer than the
            // entity): start from zero.
            _ = ftruncate(descriptor, 0)
            size = 0
        }
        let stream = PartialFileOutputStream(path: partial.path, offset: size, identity: PartialFileOutputStream.Identity(info),
                                             exclusive: true, syncsOnClose: true)
        return (ranged, stream)
    }

    /// Remembers the validator and length of the entity being written, so a
    /// later process can continue it.
    func record(_ response: ReceivedResponse) {
        var next = sidecar
        switch response.statusCode {
        case 200 where !ResumeRules.canContinue(response):
            // Decoded bytes on disk: the next run starts over (no validator to send).
            next.etag = nil
            next.lastModified = nil
            next.expectedLength = nil
        case 200:
            next.etag = response.value(forField: "etag")
            next.lastModified = response.value(forField: "last-modified")
            // Unknown (nil) when Content-Length does not count the bytes written (a transfer coding).
            next.expectedLength = response.expectedContentLength >= 0 ? response.expectedContentLength : nil
        case 206:
            if let total = response.value(forField: "content-range")?.split(separator: "/").last.flatMap({ Int64($0) }) {
                next.expectedLength = total
            }
            // The entity the bytes on disk belong to keeps its validator (a 206
            // of another one is refused before a byte is written).
            if next.etag == nil { next.etag = response.value(forField: "etag") }
        default:
            return
        }
        guard next != sidecar || !FileManager.default.fileExists(atPath: sidecarURL.path) else { return }
        save(next)
    }

    /// Keeps `next` as the sidecar, in memory and on disk.
    private func save(_ next: Sidecar) {
        sidecar = next
        if let data = try? JSONEncoder().encode(next) { try? data.write(to: sidecarURL, options: .atomic) }
    }

    /// A complete download becomes the destination; the sidecar goes away.
    func complete() throws {
        // The stream synced the file when the writer closed it. rename(2)
        // replaces a file (a symlink itself, not its target) in one step and
        // fails on a directory: nothing at the destination is deleted first,
        // so a directory made there since the download started stays whole.
        guard rename(partial.path, destination.path) == 0 else {
            let code = errno
            throw NSError(domain: NSPOSIXErrorDomain, code: Int(code), userInfo: [
                NSLocalizedDescriptionKey: "Cannot move \(partial.path) to \(destination.path): \(String(cString: strerror(code))).",
                NSFilePathErrorKey: destination.path,
            ])
        }
        // Private while partial; now the caller's file (see FileModes).
        FileModes.makeFinished(destination.path)
        try? FileManager.default.removeItem(at: sidecarURL)
    }

    /// A resume was refused because the server now has another entity (its
    /// 206 named another validator, `If-Range` being ignored): the bytes on
    /// disk can never be continued, so the next run starts over. Only our own
    /// sidecar goes; the partial file is emptied by that next run.
    func forgetIfChanged(_ response: ReceivedResponse) {
        let sent = ResumeRules.ifRangeValidator(etag: sidecar.etag, lastModified: sidecar.lastModified)
        guard response.statusCode == 206,
              ResumeRules.representationChange(ifRange: sent, etag: response.value(forField: "etag"),
                                                lastModified: response.value(forField: "last-modified")) != nil else { return }
        save(Sidecar(url: sidecar.url))
    }
}
