import Foundation

/// Keeping a batch's files inside its output directory. Lists and servers
/// are not trusted: a path is checked as text before anything is touched
/// (`check`), and each directory on the way is checked again as it is made
/// (`makeParentDirectories`), so a symbolic link planted in the output
/// directory does not lead a body outside it.
enum ResumableBatchPaths {
    /// The components of a relative output path; throws for one that could
    /// leave the directory or is ambiguous (absolute, empty, `.`, `..`, `//`, NUL).
    static func components(of path: String, id: String) throws -> [String] {
        func refuse(_ reason: String) -> ResumableBatchError {
            .unsafeOutputPath(id: id, path: path, reason: reason)
        }
        guard !path.isEmpty else { throw refuse("it is empty") }
        guard !path.hasPrefix("/") else { throw refuse("it is absolute; give a path relative to the output directory") }
        guard !path.utf8.contains(0) else { throw refuse("it holds a NUL byte") }
        let parts = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        for part in parts {
            switch part {
            case "": throw refuse("it has an empty component (a '//' or a trailing '/')")
            case ".", "..": throw refuse("it has a '\(part)' component")
            default: continue
            }
        }
        return parts
    }

    /// The path as the file system knows it: absolute and without symbolic
    /// links in the part that exists (the deepest existing ancestor, resolved,
    /// then the rest), so the same directory reads the same whether or not it
    /// has been made yet and from whatever working directory.
    static func canonical(_ path: String) -> String {
        var url = URL(fileURLWithPath: path).standardizedFileURL
        var rest: [String] = []
        while true {
            if let resolved = realpath(url.path, nil) {
                defer { free(resolved) }
                var result = URL(fileURLWithPath: String(cString: resolved))
                for component in rest.reversed() { result.appendPathComponent(component) }
                return result.path
            }
            let parent = url.deletingLastPathComponent()
            if parent.path == url.path { return URL(fileURLWithPath: path).standardizedFileURL.path }
            rest.append(url.lastPathComponent)
            url = parent
        }
    }

    /// Makes the directories of `components` (all but the last) under `base`,
    /// one at a time; throws if one is a symbolic link or not a directory.
    static func makeParentDirectories(base: String, components: [String], id: String, path: String) throws {
        var current = base
        for component in components.dropLast() {
            current += "/" + component
            var info = stat()
            if lstat(current, &info) != 0 {
                guard errno == ENOENT else { throw unsafe(id, path, "cannot look at \(current): \(String(cString: strerror(errno)))") }
                // EEXIST: made meanwhile (another entry's file in the same directory); looked at again below.
                if mkdir(current, 0o777) != 0, errno != EEXIST {
                    throw unsafe(id, path, "cannot make the directory \(current): \(String(cString: strerror(errno)))")
                }
                guard lstat(current, &info) == 0 else { throw unsafe(id, path, "cannot look at \(current)") }
            }
            if info.st_mode & S_IFMT == S_IFLNK { throw unsafe(id, path, "\(current) is a symbolic link") }
            guard info.st_mode & S_IFMT == S_IFDIR else { throw unsafe(id, path, "\(current) is not a directory") }
        }
    }

    private static func unsafe(_ id: String, _ path: String, _ reason: String) -> ResumableBatchError {
        .unsafeOutputPath(id: id, path: path, reason: reason)
    }

    /// Whether something (a file, a directory, a link, even a dangling one) is at `path`.
    static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    /// The size of the regular file at `path`, nil when there is none.
    static func fileSize(_ path: String) -> Int64? {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        return Int64(info.st_size)
    }
}
