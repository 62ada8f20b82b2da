import AFNetworkingTransport
import Foundation

/// Links an awaiting Swift task to the operation or session task it waits
/// for: cancelling the Swift task cancels the request, also when the cancel
/// comes before the request exists.
final class CancellationLink: Sendable {
    private let state = LockedState<(cancel: (@Sendable () -> Void)?, cancelled: Bool)>((nil, false))

    /// The request to cancel; cancelled at once if the Swift task already was.
    func link(_ cancel: @escaping @Sendable () -> Void) {
        let already = state.withLock { state -> Bool in
            if state.cancelled { return true }
            state.cancel = cancel
            return false
        }
        if already { cancel() }
    }

    func cancel() {
        let cancel = state.withLock { state -> (@Sendable () -> Void)? in
            state.cancelled = true
            defer { state.cancel = nil }
            return state.cancel
        }
        cancel?()
    }
}

/// A value handed from a completion block to the awaiting task: the
/// response object is not Sendable, but it is never touched again by the
/// library once handed over.
struct Handover<Value>: @unchecked Sendable {
    // @unchecked: moved from the completion queue to the awaiting task, once.
    let value: Value
}

enum AsyncBridge {
    /// The error an `await` throws: `CancellationError` when the awaiting task
    /// was cancelled and the request ended cancelled, else the request's own.
    static func thrown(_ error: Error) -> Error {
        let nsError = error as NSError
        if Task.isCancelled, nsError.domain == NSURLErrorDomain, nsError.code == NSURLErrorCancelled {
            return CancellationError()
        }
        return error
    }

    /// Awaits a callback-style request. `start` makes and starts it, handing
    /// its completion to `finish` (exactly once), and returns how to cancel it
    /// (nil when nothing was made: `finish` was or will be called with the error).
    static func run<Value>(_ start: (_ finish: @escaping @Sendable (Result<Handover<Value>, Error>) -> Void) -> (@Sendable () -> Void)?)
        async throws -> Handover<Value> {
        let link = CancellationLink()
        do {
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Handover<Value>, Error>) in
                    let once = Once()
                    let cancel = start { result in
                        guard once.claim() else { return }
                        continuation.resume(with: result)
                    }
                    if let cancel { link.link(cancel) }
                }
            } onCancel: {
                link.cancel()
            }
        } catch {
            // Here, back in the awaiting task, `Task.isCancelled` is its own.
            throw thrown(error)
        }
    }
}
