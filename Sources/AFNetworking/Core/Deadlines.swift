@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation

/// Deadlines for many tasks on one timer: tasks come and go far more often
/// than deadlines fire (the default resource timeout is seven days), so each
/// task only adds an entry to a heap and removes it when it ends; the single
/// timer is rescheduled only when the earliest deadline changes.
final class Deadlines: @unchecked Sendable {
    // @unchecked: `timer` is only touched on `queue`; everything else is in `state`.

    static let shared = Deadlines()

    struct Token: Hashable, Sendable {
        fileprivate let id: UInt64
    }

    private struct State {
        var nextID: UInt64 = 0
        /// Live deadlines by id.
        var actions: [UInt64: (deadline: UInt64, action: @Sendable () -> Void)] = [:]
        /// Min-heap of (deadline, id); ids no longer in `actions` are skipped.
        var heap: [(deadline: UInt64, id: UInt64)] = []
        /// The deadline the timer is set for (UInt64.max: none).
        var scheduled = UInt64.max
    }

    private let state = LockedState(State())
    private let queue = DispatchQueue(label: "com.alamofire.networking.deadlines")
    private let timer: DispatchSourceTimer

    private init() {
        timer = DispatchSource.makeTimerSource(queue: queue)
        timer.setEventHandler { [unowned self] in fire() }
        timer.activate()
    }

    /// Runs `action` (on a queue of its own) at `deadline` unless cancelled first.
    func add(at deadline: DispatchTime, action: @escaping @Sendable () -> Void) -> Token {
        let when = deadline.uptimeNanoseconds
        let (token, reschedule) = state.withLock { state -> (Token, Bool) in
            state.nextID += 1
            let id = state.nextID
            state.actions[id] = (when, action)
            state.heap.push((when, id))
            guard when < state.scheduled else { return (Token(id: id), false) }
            state.scheduled = when
            return (Token(id: id), true)
        }
        if reschedule { queue.async { self.rearm() } }
        return token
    }

    /// Heap entries held, live or cancelled (tests check the bound).
    var pendingCount: Int { state.withLock { $0.heap.count } }

    func cancel(_ token: Token) {
        state.withLock { state in
            state.actions[token.id] = nil
            // Cancelled entries stay in the heap until they surface; rebuild
            // it when they are most of it, so it never grows without bound.
            if state.heap.count > 64, state.heap.count > 2 * state.actions.count {
                state.heap = []
                for (id, entry) in state.actions { state.heap.push((entry.deadline, id)) }
            }
        }
    }

    private func fire() {
        dispatchPrecondition(condition: .onQueue(queue))
        let now = DispatchTime.now().uptimeNanoseconds
        let due = state.withLock { state -> [@Sendable () -> Void] in
            var due: [@Sendable () -> Void] = []
            while let first = state.heap.first, first.deadline <= now {
                state.heap.popFirst()
                if let entry = state.actions.removeValue(forKey: first.id) { due.append(entry.action) }
            }
            state.scheduled = UInt64.max
            return due
        }
        for action in due { action() }
        rearm()
    }

    /// Points the timer at the earliest live deadline.
    private func rearm() {
        dispatchPrecondition(condition: .onQueue(queue))
        let next = state.withLock { state -> UInt64? in
            while let first = state.heap.first, state.actions[first.id] == nil { state.heap.popFirst() }
            state.scheduled = state.heap.first?.deadline ?? UInt64.max
            return state.heap.first?.deadline
        }
        if let next {
            timer.schedule(deadline: DispatchTime(uptimeNanoseconds: next))
        } else {
            timer.schedule(deadline: .distantFuture)
        }
    }
}

private extension Array where Element == (deadline: UInt64, id: UInt64) {
    mutating func push(_ element: Element) {
        append(element)
        var child = count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard self[child].deadline < self[parent].deadline else { break }
            swapAt(child, parent)
            child = parent
        }
    }

    mutating func popFirst() {
        guard !isEmpty else { return }
        swapAt(0, count - 1)
        removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1, right = left + 1
            var smallest = parent
            if left < count, self[left].deadline < self[smallest].deadline { smallest = left }
            if right < count, self[right].deadline < self[smallest].deadline { smallest = right }
            guard smallest != parent else { return }
            swapAt(parent, smallest)
            parent = smallest
        }
    }
}
