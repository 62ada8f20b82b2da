import Foundation

/// A batch's state on disk, as a value: which entries are done, which have a
/// partial file (a download under way, to be continued), the output directory
/// and the SHA-256 of the list it was written for. Events change it; the batch
/// writes it after each (see `ResumableBatchManifest+Storage`).
struct ResumableBatchManifest: Codable, Equatable, Sendable {
    static let formatName = "AFNetworking.ResumableBatch"
    static let currentVersion = 1

    /// What the batch knows of one entry. An entry without a record has not
    /// started (or left nothing behind).
    struct Record: Codable, Equatable, Sendable {
        enum State: String, Codable, Sendable {
            /// Its download began: `partial` is its file (it may hold bytes to continue).
            case started
            /// It succeeded; its body is `file` (if the batch has an output directory).
            case done
        }
        var state: State
        /// The body's path, relative to the output directory.
        var file: String?
        /// The partial file's path (relative) while `started`.
        var partial: String?
    }

    var format = Self.formatName
    var version = Self.currentVersion
    /// Lowercase hex SHA-256 of the list's content.
    var listSHA256: String
    /// The canonical output directory (nil: bodies are not saved).
    var outputDirectory: String?
    /// By entry id.
    var entries: [String: Record] = [:]

    init(listSHA256: String, outputDirectory: String?) {
        self.listSHA256 = listSHA256
        self.outputDirectory = outputDirectory
    }

    // MARK: - Events

    /// The entry's download begins (its partial file is about to be made).
    mutating func started(_ id: String, file: String?) {
        entries[id] = Record(state: .started, file: file, partial: file.map { $0 + ".partial" })
    }

    /// The entry succeeded.
    mutating func done(_ id: String, file: String?) {
        entries[id] = Record(state: .done, file: file, partial: nil)
    }

    /// The entry left nothing to continue.
    mutating func forget(_ id: String) {
        entries[id] = nil
    }

    // MARK: - Checks

    /// Throws unless this manifest was written for this list, this directory
    /// and these entries (`files`: each entry's relative output path, nil
    /// without an output directory).
    func check(path: String, listSHA256: String, outputDirectory: String?, files: [String: String?]) throws {
        guard format == Self.formatName, version == Self.currentVersion else {
            throw ResumableBatchError.corruptManifest(path: path, reason: "not a batch manifest of version \(Self.currentVersion)")
        }
        guard self.listSHA256 == listSHA256 else { throw ResumableBatchError.foreignManifest(path: path) }
        guard self.outputDirectory == outputDirectory else {
            throw ResumableBatchError.manifestForAnotherDirectory(path: path, recorded: self.outputDirectory, given: outputDirectory)
        }
        for (id, record) in entries {
            guard let file = files[id] else {
                throw ResumableBatchError.corruptManifest(path: path, reason: "it names an entry '\(id)' the list does not have")
            }
            let partial = file.map { $0 + ".partial" }
            let consistent = record.file == file && (record.state == .done ? record.partial == nil : record.partial == partial)
            guard consistent else {
                throw ResumableBatchError.corruptManifest(path: path, reason: "the files of '\(id)' are not the list's")
            }
        }
    }
}
