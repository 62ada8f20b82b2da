import Foundation

/// Reading and writing the manifest. A write never leaves a half-written
/// manifest, whenever the process or the machine stops: the new content goes
/// to a temporary file in the same directory, is synced, and replaces the old
/// one with rename(2) (atomic within a file system); the directory is synced
/// so the rename itself survives a power loss.
extension ResumableBatchManifest {
    /// Larger than any real manifest by far; a bigger file is not read (a hostile or mistaken path).
    static let maximumSize = 64 * 1024 * 1024

    /// The manifest at `path`; nil when there is no file there. Throws
    /// `corruptManifest` for anything else that is not one.
    static func load(from path: String) throws -> ResumableBatchManifest? {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            if errno == ENOENT { return nil }
            throw ResumableBatchError.corruptManifest(path: path, reason: String(cString: strerror(errno)))
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw ResumableBatchError.corruptManifest(path: path, reason: "not a regular file")
        }
        guard info.st_size <= maximumSize else { throw ResumableBatchError.corruptManifest(path: path, reason: "too large") }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ResumableBatchError.corruptManifest(path: path, reason: "cannot be read")
        }
        do {
            return try JSONDecoder().decode(ResumableBatchManifest.self, from: data)
        } catch {
            throw ResumableBatchError.corruptManifest(path: path, reason: "not a batch manifest")
        }
    }

    /// Replaces the manifest at `path` with this one, atomically.
    func write(to path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        let data: Data
        do { data = try encoder.encode(self) } catch {
            throw ResumableBatchError.manifestNotWritable(path: path, reason: "\(error)")
        }
        try Self.replaceAtomically(path, with: data)
    }

    /// Temporary file, write, fsync, rename over `path`, fsync the directory.
    static func replaceAtomically(_ path: String, with data: Data) throws {
        func failure(_ what: String, _ code: Int32 = errno) -> ResumableBatchError {
            .manifestNotWritable(path: path, reason: "\(what): \(String(cString: strerror(code)))")
        }
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent().path
        // Hidden, unique (pid and a random part), and never a file of someone else's (O_EXCL, O_NOFOLLOW).
        let temporary = directory + "/." + url.lastPathComponent + ".tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o666)
        guard descriptor >= 0 else { throw failure("cannot make \(temporary)") }
        var written = 0
        let wrote = data.withUnsafeBytes { bytes -> Bool in
            while written < bytes.count {
                let result = Foundation.write(descriptor, bytes.baseAddress! + written, bytes.count - written)
                if result < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                written += result
            }
            return true
        }
        let writeError = errno
        guard wrote, fsync(descriptor) == 0 else {
            let code = wrote ? errno : writeError
            close(descriptor)
            unlink(temporary)
            throw failure("cannot write \(temporary)", code)
        }
        close(descriptor)
        guard rename(temporary, path) == 0 else {
            let code = errno
            unlink(temporary)
            throw failure("cannot move \(temporary) to \(path)", code)
        }
        let directoryDescriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryDescriptor >= 0 {
            // Best effort: the new manifest is in place either way; this makes the rename durable.
            _ = fsync(directoryDescriptor)
            close(directoryDescriptor)
        }
    }
}
