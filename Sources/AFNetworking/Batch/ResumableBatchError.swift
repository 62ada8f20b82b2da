import Foundation

/// Why a `ResumableBatch` refused to run, or why one of its entries failed.
///
/// The cases up to `cannotMakeOutputDirectory` are thrown by `ResumableBatch.init`
/// (or reported by `start` for `manifestNotWritable` and
/// `cannotMakeOutputDirectory`) before anything is sent or written:
/// the output directory, its files and the manifest are as they were
/// (`refusesBatch` is true). `outputExists`, `foreignPartialFile`,
/// `unsafeOutputPath` found while running and `unsupportedURL` end a single
/// entry `.failed`; its dependents are skipped.
///
/// Failure reports and `NSError` bridging use `ResumableBatchError.errorDomain`
/// ("AFNetworking.ResumableBatchError"), with one code per case (`errorCode`).
public enum ResumableBatchError: Error, Equatable, Sendable, CustomNSError {
    /// A line of a batch list is not in the list's format (line numbers from 1).
    case badLine(line: Int, reason: String)
    /// Two entries have the same id.
    case duplicateID(String)
    /// An entry depends on an id no entry has.
    case unknownDependency(id: String, dependency: String)
    /// Dependencies close a cycle: the ids along it, the first repeated at the end.
    case cycle([String])
    /// An output path that could leave the output directory (`..`, an absolute
    /// path, an empty or `.` component, a NUL) or that runs through a symbolic
    /// link or a file where a directory should be.
    case unsafeOutputPath(id: String, path: String, reason: String)
    /// The entry has no `outputPath` and its URL has no last path component to name the file.
    case noFileName(id: String)
    /// Two entries would write the same file (or one's file is in the other's way:
    /// its directory, its `.partial` or `.partial.json` file, the manifest).
    case sameOutputFile(path: String, ids: [String])
    /// The manifest cannot be read as one (not JSON, another format, entries
    /// that do not match the list).
    case corruptManifest(path: String, reason: String)
    /// The manifest was written for a list with other content (its SHA-256 differs).
    case foreignManifest(path: String)
    /// The manifest was written for another output directory (nil: none).
    case manifestForAnotherDirectory(path: String, recorded: String?, given: String?)
    /// The manifest could not be written (the batch sends nothing then).
    case manifestNotWritable(path: String, reason: String)
    /// The output directory could not be made (the batch sends nothing then).
    case cannotMakeOutputDirectory(path: String, reason: String)
    /// A file the batch did not make is where an entry's body would go: it is
    /// never written over.
    case outputExists(id: String, path: String)
    /// `<file>.partial` holds bytes and has no `.partial.json`: not a download
    /// this library left, so it is not emptied.
    case foreignPartialFile(id: String, path: String)
    /// The entry's request is not an absolute http(s) URL: nothing is sent.
    case unsupportedURL(id: String)

    /// "AFNetworking.ResumableBatchError".
    public static var errorDomain: String { "AFNetworking.ResumableBatchError" }

    /// 1 `badLine`, 2 `duplicateID`, 3 `unknownDependency`, 4 `cycle`,
    /// 5 `unsafeOutputPath`, 6 `noFileName`, 7 `sameOutputFile`,
    /// 8 `corruptManifest`, 9 `foreignManifest`, 10 `manifestForAnotherDirectory`,
    /// 11 `manifestNotWritable`, 12 `outputExists`, 13 `foreignPartialFile`, 14 `unsupportedURL`,
    /// 15 `cannotMakeOutputDirectory`.
    public var errorCode: Int {
        switch self {
        case .badLine: return 1
        case .duplicateID: return 2
        case .unknownDependency: return 3
        case .cycle: return 4
        case .unsafeOutputPath: return 5
        case .noFileName: return 6
        case .sameOutputFile: return 7
        case .corruptManifest: return 8
        case .foreignManifest: return 9
        case .manifestForAnotherDirectory: return 10
        case .manifestNotWritable: return 11
        case .outputExists: return 12
        case .foreignPartialFile: return 13
        case .unsupportedURL: return 14
        case .cannotMakeOutputDirectory: return 15
        }
    }

    /// Whether the whole batch was refused before anything was sent or
    /// written (false: one entry failed).
    public var refusesBatch: Bool {
        switch self {
        case .outputExists, .foreignPartialFile, .unsupportedURL: return false
        default: return true
        }
    }

    /// The description (`NSLocalizedDescriptionKey`) a message can show.
    public var errorUserInfo: [String: Any] {
        [NSLocalizedDescriptionKey: message]
    }

    /// One sentence saying what is wrong and what to do.
    public var message: String {
        switch self {
        case .badLine(let line, let reason):
            return "line \(line): \(reason)"
        case .duplicateID(let id):
            return "two entries have the id '\(id)'"
        case .unknownDependency(let id, let dependency):
            return "'\(id)' comes after '\(dependency)', which no entry has as its id"
        case .cycle(let ids):
            return "the dependencies close a cycle: \(ids.joined(separator: " -> "))"
        case .unsafeOutputPath(let id, let path, let reason):
            return "'\(id)': the output path '\(path)' is refused: \(reason)"
        case .noFileName(let id):
            return "'\(id)': its URL has no last path component to name the file; give it out=PATH"
        case .sameOutputFile(let path, let ids):
            return "\(ids.map { "'\($0)'" }.joined(separator: " and ")) would both write \(path)"
        case .corruptManifest(let path, let reason):
            return "the manifest \(path) is not usable (\(reason)); nothing was touched"
        case .foreignManifest(let path):
            return "the manifest \(path) was written for a list with other content; nothing was touched"
        case .manifestForAnotherDirectory(let path, let recorded, let given):
            return "the manifest \(path) was written for the output directory \(recorded ?? "(none)"), "
                + "not \(given ?? "(none)"); nothing was touched"
        case .manifestNotWritable(let path, let reason):
            return "cannot write the manifest \(path): \(reason)"
        case .cannotMakeOutputDirectory(let path, let reason):
            return "cannot make the output directory \(path): \(reason)"
        case .outputExists(let id, let path):
            return "'\(id)': \(path) exists and is not a file this batch made; move it away first"
        case .foreignPartialFile(let id, let path):
            return "'\(id)': \(path) exists and is not a download left by this library (no .partial.json); move it away first"
        case .unsupportedURL(let id):
            return "'\(id)': not an http(s) URL"
        }
    }
}
