import AFNetworkingTransport
import Foundation

/// Posts the operations' and tasks' notifications on the main queue, in
/// order, with one main-queue hop per burst instead of one per notification:
/// a busy queue finishing thousands of operations would otherwise wake the
/// main thread twice per request.
final class MainQueueNotifier: Sendable {
    static let shared = MainQueueNotifier()

    private struct Pending: @unchecked Sendable {
        // @unchecked: the objects are only handed to NotificationCenter on the main queue.
        var notifications: [(Notification.Name, AnyObject, [AnyHashable: Any]?)] = []
    }
    private let pending = LockedState(Pending())

    func post(_ name: Notification.Name, object: AnyObject, userInfo: [AnyHashable: Any]? = nil) {
        let scheduleDrain = pending.withLock { pending in
            defer { pending.notifications.append((name, object, userInfo)) }
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
        for (name, object, userInfo) in batch {
            NotificationCenter.default.post(name: name, object: object, userInfo: userInfo)
        }
    }
}
