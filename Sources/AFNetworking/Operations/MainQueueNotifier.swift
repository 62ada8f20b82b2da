import Foundation

/// Posts the operations' start and finish notifications on the main queue, in
/// order, with one main-queue hop per burst instead of one per notification:
/// a busy queue finishing thousands of operations would otherwise wake the
/// main thread twice per request.
final class MainQueueNotifier: @unchecked Sendable {
    static let shared = MainQueueNotifier()

    private let lock = NSLock()
    private var pending: [(Notification.Name, AnyObject)] = []

    func post(_ name: Notification.Name, object: AnyObject) {
        lock.lock()
        let scheduleDrain = pending.isEmpty
        pending.append((name, object))
        lock.unlock()
        if scheduleDrain {
            DispatchQueue.main.async { self.drain() }
        }
    }

    private func drain() {
        lock.lock()
        let batch = pending
        pending.removeAll(keepingCapacity: true)
        lock.unlock()
        for (name, object) in batch {
            NotificationCenter.default.post(name: name, object: object)
        }
    }
}
