import Foundation

/// The checks `ResumableBatch.init` makes before anything is touched: ids,
/// dependencies (known, no cycle), output paths (inside the directory, no two
/// entries on one file).
extension ResumableBatch {
    /// Throws for a repeated id or a dependency on an unknown id; returns the
    /// indexes of `entries` in an order where each comes after its
    /// dependencies (the given order wherever it allows), or throws `.cycle`.
    static func dependencyOrder(of entries: [ResumableBatchEntry]) throws -> [Int] {
        var indexOfID: [String: Int] = [:]
        for (index, entry) in entries.enumerated() {
            guard indexOfID.updateValue(index, forKey: entry.id) == nil else { throw ResumableBatchError.duplicateID(entry.id) }
        }
        var waitingFor = [Int](repeating: 0, count: entries.count)
        var dependents = [[Int]](repeating: [], count: entries.count)
        for (index, entry) in entries.enumerated() {
            for dependency in Set(entry.dependencies) {
                guard let other = indexOfID[dependency] else {
                    throw ResumableBatchError.unknownDependency(id: entry.id, dependency: dependency)
                }
                waitingFor[index] += 1
                dependents[other].append(index)
            }
        }
        // Kahn's algorithm, always taking the earliest ready entry: quadratic
        // at worst, and lists are written by hand.
        var order: [Int] = []
        var ready = Set(entries.indices.filter { waitingFor[$0] == 0 })
        while let next = ready.min() {
            ready.remove(next)
            order.append(next)
            for dependent in dependents[next] {
                waitingFor[dependent] -= 1
                if waitingFor[dependent] == 0 { ready.insert(dependent) }
            }
        }
        guard order.count == entries.count else {
            throw ResumableBatchError.cycle(cycle(in: entries, among: Set(entries.indices).subtracting(order), indexOfID: indexOfID))
        }
        return order
    }

    /// One cycle among `remaining` (entries Kahn's algorithm could not order:
    /// each waits for another of them): follow dependencies until one repeats.
    private static func cycle(in entries: [ResumableBatchEntry], among remaining: Set<Int>, indexOfID: [String: Int]) -> [String] {
        guard var current = remaining.min() else { return [] }
        var path: [Int] = []
        var seen: [Int: Int] = [:]
        while seen[current] == nil {
            seen[current] = path.count
            path.append(current)
            guard let next = entries[current].dependencies.compactMap({ indexOfID[$0] }).first(where: remaining.contains) else { break }
            current = next
        }
        let loop = path[(seen[current] ?? 0)...].map { entries[$0].id }
        return loop + [entries[current].id]
    }

    /// Each entry's output path relative to the directory (nil without a
    /// directory), checked as text: inside it, and no two entries on one
    /// file, its partial file or its sidecar, or on a directory another's
    /// file needs. `manifest` (relative) must not be in the way either.
    static func outputFiles(of entries: [ResumableBatchEntry], hasDirectory: Bool, manifest: String?) throws -> [String?] {
        var files: [String?] = []
        var claims: [String: String] = [:]          // file → id
        var directories: [String: String] = [:]     // directory a file needs → id
        if let manifest { claims[manifest] = "the manifest" }
        for entry in entries {
            // A path given is checked even without a directory: a list that
            // would escape one is refused however it is run.
            if let given = entry.outputPath { _ = try ResumableBatchPaths.components(of: given, id: entry.id) }
            // An entry that is not fetched (not an http(s) URL) fails; it names no file.
            guard hasDirectory, entry.isFetchable else {
                files.append(nil)
                continue
            }
            guard let path = entry.outputPath ?? entry.fileNameFromURL else { throw ResumableBatchError.noFileName(id: entry.id) }
            let components = try ResumableBatchPaths.components(of: path, id: entry.id)
            for claimed in [path, path + ".partial", path + ".partial.json"] {
                if let other = claims[claimed] ?? directories[claimed] {
                    throw ResumableBatchError.sameOutputFile(path: claimed, ids: [other, entry.id])
                }
                claims[claimed] = entry.id
            }
            for depth in 1..<max(components.count, 1) {
                let directory = components[..<depth].joined(separator: "/")
                if let other = claims[directory] { throw ResumableBatchError.sameOutputFile(path: directory, ids: [other, entry.id]) }
                directories[directory] = entry.id
            }
            files.append(path)
        }
        return files
    }
}
