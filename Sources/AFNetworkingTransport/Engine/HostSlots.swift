/// One host-limit key's transfers: how many run, and those waiting for a
/// slot, in arrival order. A queue with O(1) arrival, departure and removal
/// (a session may queue tens of thousands of tasks for one host, and an
/// invalidation cancels them all). Network thread only.
final class HostSlots {
    var running = 0
    /// Waiting transfers; nil where one left the line early.
    private var line: [Transfer?] = []
    /// Index of the first entry still in `line`.
    private var head = 0
    /// Absolute position of `line[0]` (positions survive compaction).
    private var base = 0
    private var positions: [ObjectIdentifier: Int] = [:]

    var isIdle: Bool { running == 0 && positions.isEmpty }

    func enqueue(_ transfer: Transfer) {
        positions[ObjectIdentifier(transfer)] = base + line.count
        line.append(transfer)
    }

    /// The longest-waiting transfer, if any.
    func dequeue() -> Transfer? {
        while head < line.count {
            let next = line[head]
            line[head] = nil
            head += 1
            if let next {
                positions[ObjectIdentifier(next)] = nil
                compact()
                return next
            }
        }
        compact()
        return nil
    }

    /// Takes `transfer` out of the line; false if it was not waiting.
    func remove(_ transfer: Transfer) -> Bool {
        guard let position = positions.removeValue(forKey: ObjectIdentifier(transfer)) else { return false }
        line[position - base] = nil
        return true
    }

    /// Drops the consumed front once it is most of the storage.
    private func compact() {
        guard head > 64, head * 2 > line.count else { return }
        line.removeFirst(head)
        base += head
        head = 0
    }
}
