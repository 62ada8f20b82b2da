import Foundation

/// How one entry of a `ResumableBatch` ended.
public enum ResumableBatchOutcome: Sendable {
    /// Fetched in this run (from zero, or continuing a partial file).
    case done
    /// Done in an earlier run, as the manifest says: nothing was sent.
    case alreadyDone
    /// The request failed (transport error, HTTP status outside 200–299), or
    /// the entry could not start (`ResumableBatchError`).
    case failed(any Error)
    /// Cancelled (`ResumableBatch.cancel()`).
    case cancelled
    /// A dependency (this id) failed, was cancelled or was skipped: nothing was sent.
    case skipped(because: String)

    /// Whether the entry's body is complete: `.done` or `.alreadyDone`.
    public var isSuccess: Bool {
        switch self {
        case .done, .alreadyDone: return true
        default: return false
        }
    }
}

/// What one entry did.
public struct ResumableBatchEntryResult: Sendable {
    /// The entry.
    public let entry: ResumableBatchEntry
    /// How it ended.
    public let outcome: ResumableBatchOutcome
    /// The final response's status code, if a response arrived.
    public let statusCode: Int?
    /// Response body bytes received in this run.
    public let bytesReceived: Int64
    /// Where the body was continued from (a `Range` request), nil when it was fetched from zero or not at all.
    public let resumedFrom: Int64?
    /// The body's file, with an output directory.
    public let file: URL?
    /// The body, without an output directory.
    public let body: Data?
    /// Seconds from the request's start to its end (0 when nothing was sent).
    public let seconds: TimeInterval
}

/// Every entry's result, in the order of the entries.
public struct ResumableBatchReport: Sendable {
    /// The results, in the order the entries were given.
    public let results: [ResumableBatchEntryResult]

    /// Whether every entry's body is complete.
    public var allSucceeded: Bool { results.allSatisfy(\.outcome.isSuccess) }

    /// The result of the entry with this id.
    public subscript(id: String) -> ResumableBatchEntryResult? { results.first { $0.entry.id == id } }
}
