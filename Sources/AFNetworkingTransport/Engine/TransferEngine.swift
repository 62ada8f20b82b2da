/// What a request's driver asks of the engine that runs its transfers: the
/// four commands, nothing about curl. `NetworkEngine` (one network thread,
/// one curl multi handle) is the one the library uses; tests of the driver
/// put a fake in its place and play the transfer's reports themselves, with
/// no socket.
package protocol TransferEngine: AnyObject, Sendable {
    /// Whether the caller is the thread the engine's transfers report on
    /// (which must never block, run user code or touch a file).
    var isReportingThread: Bool { get }
    /// Hands `transfer` to the engine; its delegate hears from it from now on.
    func start(_ transfer: Transfer)
    /// Ends `transfer` early (sticky: the first reason counts).
    func abort(_ transfer: Transfer, reason: AbortReason)
    /// Lets a transfer paused by a full output receive again.
    func resumeReceiving(_ transfer: Transfer)
    /// Stops (true) or restarts (false) a transfer's data flow, keeping its connection.
    func setSuspended(_ transfer: Transfer, _ suspended: Bool)
}

extension NetworkEngine: TransferEngine {
    package var isReportingThread: Bool { NetworkThread.isCurrent }
}
