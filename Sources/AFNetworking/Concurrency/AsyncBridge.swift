@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Links an awaiting Swift task to the operation or session task it waits
/// for: cancelling the Swift task cancels the request, also when the cancel
/// comes before the request exists, and resumes the awaiting task itself —
/// at once, whether or not the request's queue runs (a suspended operation
/// queue, a busy main queue that would deliver the completion).
final class CancellationLink: Sendable {
    private struct State {
        var cancel: (@Sendable () -> Void)?
        var abandon: (@Sendable () -> Void)?
        var cancelled = false
    }

    private let state = LockedState(State())

    /// What ends the wait on cancel. False when the Swift task is already
    /// cancelled (nothing was kept: the caller ends the wait itself).
    func onCancel(_ abandon: @escaping @Sendable () -> Void) -> Bool {
        state.withLock { state -> Bool in
            if state.cancelled { return false }
            state.abandon = abandon
            return true
        }
    }

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
        let (cancel, abandon) = state.withLock { state -> ((@Sendable () -> Void)?, (@Sendable () -> Void)?) in
            state.cancelled = true
            defer { state.cancel = nil; state.abandon = nil }
            return (state.cancel, state.abandon)
        }
        cancel?()
        abandon?()
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
            // A cancelled download that kept its partial file hands out the data naming it.
            if nsError.userInfo[URLSessionDownloadTaskResumeData] is Data {
                return URLError(.cancelled, userInfo: nsError.userInfo)
            }
            return CancellationError()
        }
        return error
    }

    /// As `run`, for a call that makes a new request (a verb, a session task):
    /// a Swift task already cancelled makes none and throws `CancellationError`,
    /// so nothing is sent (made and cancelled a moment later, it could connect
    /// or send before the cancel reached it).
    static func request<Value>(waitsForTheEndOnCancel: Bool = false,
                               _ start: (_ finish: @escaping @Sendable (Result<Handover<Value>, Error>) -> Void) -> (@Sendable () -> Void)?)
        async throws -> Handover<Value> {
        try Task.checkCancellation()
        return try await run(waitsForTheEndOnCancel: waitsForTheEndOnCancel, start)
    }

    /// Awaits a callback-style request. `start` makes and starts it, handing
    /// its completion to `finish` (exactly once), and returns how to cancel it
    /// (nil when nothing was made: `finish` was or will be called with the error).
    /// `waitsForTheEndOnCancel`: a cancel does not end the wait at once but
    /// waits for the request's own end (a download's, which brings its resume data).
    static func run<Value>(waitsForTheEndOnCancel: Bool = false, _ start: (_ finish: @escaping @Sendable (Result<Handover<Value>, Error>) -> Void) -> (@Sendable () -> Void)?)
        async throws -> Handover<Value> {
        let link = CancellationLink()
        do {
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Handover<Value>, Error>) in
                    let once = Once()
                    let resume: @Sendable (Result<Handover<Value>, Error>) -> Void = { result in
                        guard once.claim() else { return }
                        continuation.resume(with: result)
                    }
                    // The request's own completion may wait for a queue that
                    // does not run; a cancelled await does not wait for it.
                    if !waitsForTheEndOnCancel, !link.onCancel({ resume(.failure(CancellationError())) }) {
                        resume(.failure(CancellationError()))
                    }
                    // Made even then, so the request is cancelled as it would
                    // have been a moment later (`link` cancels it at once).
                    let cancel = start(resume)
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
