@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation

/// Posts the operations' and tasks' notifications on the main queue, in
/// order, with one main-queue hop per burst instead of one per notification:
/// a busy queue finishing thousands of operations would otherwise wake the
/// main thread twice per request.
///
/// A waiting notification holds its object (observers such as the activity
/// indicator match a finish to its start by object), and a finished
/// operation or a completed task's `userInfo` holds its response body. A
/// process whose main queue is not serviced — a tool or server blocking its
/// main thread on a semaphore — would keep every finished request and its
/// body alive here. So what waits is bounded, by count and by the memory it
/// keeps alive (bodies, and a fixed estimate per request): past either
/// bound, an object's beginning and its end that both still wait are
/// dropped together (no observer saw either, so none sees an end without its
/// beginning or the reverse), oldest first.
/// What stays after that is bounded by the requests that were in flight when
/// the main queue stopped: beginnings of requests still running, and ends of
/// requests whose beginning was delivered. Only if even that passes the
/// count does the oldest half go, as a last resort.
final class MainQueueNotifier: Sendable {
    static let shared = MainQueueNotifier()

    /// Where a notification stands in its object's life: a beginning (an
    /// operation starts or resumes, a task resumes) or an end (an operation
    /// finishes or pauses, a task suspends or completes). The poster says
    /// which; each object's beginnings and ends alternate, beginning first.
    enum Mark {
        case begins, ends
    }

    private struct Entry {
        let name: Notification.Name
        let object: AnyObject
        let userInfo: [AnyHashable: Any]?
        let mark: Mark
        /// What this entry counts as keeping alive: the body its object or
        /// userInfo holds, plus `objectCost`.
        let cost: Int
    }

    /// Entries a compaction dropped, on their way to be released elsewhere.
    private struct DroppedEntries: @unchecked Sendable {
        // @unchecked: nothing reads them; they are only released.
        let entries: [Entry]
    }

    private struct Pending: @unchecked Sendable {
        // @unchecked: the entries are only handed to NotificationCenter on the main queue.
        var notifications: [Entry] = []
        var cost = 0
        /// Compaction runs again only once the waiting count or cost has grown
        /// past these (twice what the last one left, at least the bounds):
        /// a main queue that stays blocked costs amortised O(1) per post.
        var compactAtCount = MainQueueNotifier.capacity
        var compactAtCost = MainQueueNotifier.costLimit
    }
    private let pending = LockedState(Pending())

    /// Notifications that may wait for the main queue before pairs are dropped.
    static let capacity = 16384
    /// Bytes waiting notifications may keep alive before pairs are dropped.
    /// A main queue that turns every few milliseconds never comes near it
    /// (some 2,000 finished requests of 1 KiB wait at this bound).
    static let costLimit = 8 << 20
    /// What one waiting notification is counted as keeping alive besides the
    /// body: a finished operation's or task's own state, response and headers
    /// (measured: 2.4–3.5 KiB per finished operation of a 1 KiB GET, body included).
    static let objectCost = 2 << 10

    /// Posts `name` on the main queue after everything posted before it.
    /// `cost`: the bytes of response body the notification keeps alive.
    func post(_ name: Notification.Name, object: AnyObject, userInfo: [AnyHashable: Any]? = nil, marks mark: Mark, cost: Int = 0) {
        let entry = Entry(name: name, object: object, userInfo: userInfo, mark: mark,
                          cost: MainQueueNotifier.objectCost + max(cost, 0))
        let (scheduleDrain, dropped) = pending.withLock { pending -> (Bool, [Entry]) in
            let wasEmpty = pending.notifications.isEmpty
            pending.notifications.append(entry)
            pending.cost += entry.cost
            guard pending.notifications.count >= pending.compactAtCount || pending.cost > pending.compactAtCost else {
                return (wasEmpty, [])
            }
            return (wasEmpty, MainQueueNotifier.compact(&pending))
        }
        // Released outside the lock (a dropped object's deinit may be a
        // subclass's own code) and off the posting thread: a compaction lets
        // go of a few thousand requests at once, milliseconds of work the
        // thread finishing a request (or the network thread) should not wait for.
        if !dropped.isEmpty {
            let release = DroppedEntries(entries: dropped)
            DispatchQueue.global(qos: .utility).async { withExtendedLifetime(release) {} }
        }
        if scheduleDrain {
            DispatchQueue.main.async { self.drain() }
        }
    }

    /// How many notifications wait, and what they count as keeping alive (tests).
    var waiting: (count: Int, cost: Int) { pending.withLock { ($0.notifications.count, $0.cost) } }

    private func drain() {
        dispatchPrecondition(condition: .onQueue(.main))
        let batch = pending.withLock { pending in
            defer { pending = Pending() }
            return pending.notifications
        }
        for entry in batch {
            NotificationCenter.default.post(name: entry.name, object: entry.object, userInfo: entry.userInfo)
        }
    }

    /// Drops every beginning whose end also waits, with that end, then — only
    /// if the count is still at the bound — the oldest half. Returns what it
    /// dropped, for the caller to release outside the lock.
    private static func compact(_ pending: inout Pending) -> [Entry] {
        var dropped = [Bool](repeating: false, count: pending.notifications.count)
        // Per object, the index of its beginning that waits without an end yet.
        var openBeginning: [ObjectIdentifier: Int] = [:]
        for (index, entry) in pending.notifications.enumerated() {
            let key = ObjectIdentifier(entry.object)
            switch entry.mark {
            case .begins:
                openBeginning[key] = index
            case .ends:
                if let beginning = openBeginning.removeValue(forKey: key) {
                    dropped[beginning] = true
                    dropped[index] = true
                }
            }
        }
        var kept: [Entry] = [], gone: [Entry] = []
        kept.reserveCapacity(pending.notifications.count)
        var cost = 0
        for (index, entry) in pending.notifications.enumerated() {
            if dropped[index] {
                gone.append(entry)
            } else {
                kept.append(entry)
                cost += entry.cost
            }
        }
        if kept.count >= capacity {
            let oldest = kept.prefix(kept.count / 2)
            cost -= oldest.reduce(0) { $0 + $1.cost }
            gone.append(contentsOf: oldest)
            kept.removeFirst(oldest.count)
        }
        pending.notifications = kept
        pending.cost = cost
        pending.compactAtCount = max(capacity, kept.count * 2)
        pending.compactAtCost = max(costLimit, cost * 2)
        return gone
    }
}
