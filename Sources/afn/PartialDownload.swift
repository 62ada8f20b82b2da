import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A restart-proof download to FILE (`afn download`, `afn get --resume`)
/// through the library's `resumingDownloadTo`: the body goes to
/// `FILE.partial` and the entity's validator and length to
/// `FILE.partial.json`, both next to FILE and written as the body arrives, so
/// they outlive any end of the process (Ctrl-C, SIGKILL, a crash, a reboot);
/// the next run with the same FILE continues with a Range request validated
/// by If-Range, and the partial file becomes FILE once complete.
struct PartialDownload {
    /// FILE.
    let path: String
    var partialPath: String { path + ".partial" }
    var sidecarPath: String { path + ".partial.json" }

    /// The operation writing to `FILE.partial`: ranged when an earlier run
    /// left part of the entity there, from zero otherwise.
    func makeOperation(for request: URLRequest) throws -> HTTPRequestOperation {
        try refuseForeignPartial()
        do {
            return try HTTPRequestOperation(request: request, resumingDownloadTo: URL(fileURLWithPath: path))
        } catch {
            throw ToolFailure(status: ExitStatus.writeError, message: "cannot write \(partialPath): \(error.localizedDescription)")
        }
    }

    /// Whether `operation` continues what an earlier run left (it asks for a range).
    static func continues(_ operation: HTTPRequestOperation) -> Bool {
        operation.request.value(forHTTPHeaderField: "Range") != nil
    }

    /// After the run: returns whether `FILE.partial` is still there for a
    /// later run to continue. It is, when it holds part of the entity — this
    /// run continued an earlier one (an answer that is not the entity never
    /// reaches a continued file), or it was answered with the entity (200,
    /// 206) and cut off. Otherwise it holds none of it — an HTTP error page, a
    /// redirect not followed, nothing at all — and it goes, with its sidecar:
    /// a run that started from zero leaves nothing it made behind.
    @discardableResult
    func keepIfResumable(after operation: HTTPRequestOperation, continued: Bool) -> Bool {
        // Gone: complete (it became FILE), or never made.
        guard FileManager.default.fileExists(atPath: partialPath) else { return false }
        let status = operation.response?.statusCode
        if continued || status == 200 || status == 206 { return true }
        try? FileManager.default.removeItem(atPath: partialPath)
        try? FileManager.default.removeItem(atPath: sidecarPath)
        return false
    }

    /// A `FILE.partial` with bytes in it and no sidecar is not one afn left
    /// (the sidecar is written before the first byte): the library would
    /// empty it to start over, and afn never destroys a file it did not make.
    private func refuseForeignPartial() throws {
        var info = stat()
        guard lstat(partialPath, &info) == 0, info.st_size > 0, !FileManager.default.fileExists(atPath: sidecarPath) else { return }
        throw ToolFailure(status: ExitStatus.writeError,
                          message: "\(partialPath) exists and is not a download afn left (there is no \(sidecarPath)); move it away first")
    }
}
