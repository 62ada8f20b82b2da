@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation

/// Posts the operations' and tasks' notifications on the main queue, in
/// order, with one main-queue hop per burst instead of one per notification:
/// a busy queue finishing thousands of operations would otherwise wake the
/// main thread twice per request.
final class MainQueueNotifier: Sendable {
    static let shared = MainQueueNotifier()

    /// A notification waiting for the main queue (its object is held until
    /// then: observers such as the activity indicator match finish to start
    /// by object).
    private struct Entry {
        let name: Notification.Name
        let object: AnyObject
        let userInfo: [AnyHashable: Any]?
    }

    private struct Pending: @unchecked Sendable {
        // @unchecked: the entries are only handed to NotificationCenter on the main queue.
        var notifications: [Entry] = []
    }
    private let pending = LockedState(Pending())
    /// A process that never services its main queue (a tool blocking its main
    /// thread) cannot observe these notifications, but would keep every
    /// finished request (and its response body) alive in them: beyond this
    /// many waiting, the oldest half is dropped.
    static let capacity = 16384

    func post(_ name: Notification.Name, object: AnyObject, userInfo: [AnyHashable: Any]? = nil) {
        let scheduleDrain = pending.withLock { pending in
            defer {
                if pending.notifications.count >= MainQueueNotifier.capacity { pending.notifications.removeFirst(pending.notifications.count / 2) }
                pending.notifications.append(Entry(name: name, object: object, userInfo: userInfo))
            }
            return pending.notifications.isEmpty
        }
        if scheduleDrain {
            DispatchQueue.main.async { self.drain() }
        }
    }

    private func drain() {
        let batch = pending.withLock { pending in
            defer { pending.notifications.removeAll(keepingCapacity: true) }
            return pending.notifications
        }
        for entry in batch {
            NotificationCenter.default.post(name: entry.name, object: entry.object, userInfo: entry.userInfo)
        }
    }
}
