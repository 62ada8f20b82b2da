import Foundation

/// A file about to be sent as a request body (a multipart file part, an
/// upload task's file), as reading it will find it: stat(2), which follows
/// symbolic links as open(2) does. `FileManager.attributesOfItem` uses
/// lstat(2) on Linux, so a body sized from it was wrong for a link: the
/// link's own length was announced and only that many bytes of the target
/// were sent, without an error; a link to a directory passed as "not a
/// directory"; and a FIFO or device gave the length 0.
enum BodyFile {
    /// What a path names, links followed.
    enum Kind {
        /// A regular file and its length in bytes: the only kind whose
        /// length is known before it is read.
        case regular(size: Int64)
        case directory
        /// A FIFO, socket or device: stat(2) gives it no length to announce.
        case other
    }

    /// The file at `path`, links followed; or the POSIX error (in
    /// `NSPOSIXErrorDomain`, with the path) when stat(2) fails: no such file,
    /// a dangling link, a directory on the way that cannot be searched.
    static func kind(atPath path: String) -> Result<Kind, NSError> {
        var info = stat()
        guard stat(path, &info) == 0 else {
            return .failure(NSError(domain: NSPOSIXErrorDomain, code: Int(errno), userInfo: [NSFilePathErrorKey: path]))
        }
        let type = info.st_mode & S_IFMT
        if type == S_IFREG { return .success(.regular(size: Int64(info.st_size))) }
        if type == S_IFDIR { return .success(.directory) }
        return .success(.other)
    }

    /// The length of the regular file at `path`, links followed; nil for
    /// anything else (missing, a directory, a FIFO or device).
    static func regularFileSize(atPath path: String) -> Int64? {
        guard case .success(.regular(let size)) = kind(atPath: path) else { return nil }
        return size
    }
}
