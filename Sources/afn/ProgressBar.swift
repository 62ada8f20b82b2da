import Foundation

/// A one-line progress bar on stderr, redrawn at most every 100 ms.
final class ProgressBar: @unchecked Sendable {
    private let label: String
    private var lastDraw = Date.distantPast
    private var lastTotal: Int64 = 0
    private var lastExpected: Int64 = -1
    /// Bytes that were already there when the transfer (re)started: the bar
    /// starts there, and the rate counts only what arrives now.
    private var baseline: Int64 = 0
    private var startedAt = Date()
    /// Whether the baseline is known (set by `start(at:of:)` or the first `update(_:of:read:)`).
    private var started = false
    private let lock = NSLock()

    init(label: String) { self.label = label }

    /// A resumed transfer continues at `offset` of `expected` bytes.
    func start(at offset: Int64, of expected: Int64) {
        lock.lock(); defer { lock.unlock() }
        baseline = offset
        lastTotal = offset
        lastExpected = expected
        startedAt = Date()
        started = true
        draw()
    }

    /// Progress of an operation whose counts are absolute (a resumed one
    /// reports from the entity's first byte): the first report fixes where
    /// this run started, `total - bytes`, so the bar starts there and the
    /// rate counts only what this run received.
    func update(_ total: Int64, of expected: Int64, read bytes: Int) {
        lock.lock()
        if !started {
            started = true
            baseline = max(0, total - Int64(bytes))
            startedAt = Date()
        }
        lock.unlock()
        update(total, of: expected)
    }

    func update(_ total: Int64, of expected: Int64) {
        lock.lock(); defer { lock.unlock() }
        lastTotal = total
        lastExpected = expected
        if Date().timeIntervalSince(lastDraw) >= 0.1 { draw() }
    }

    func finish() {
        lock.lock(); defer { lock.unlock() }
        if lastTotal > 0 { draw(); Console.progress("\n") }
    }

    private func draw() {
        lastDraw = Date()
        let width = 30
        let fraction = lastExpected > 0 ? min(1, Double(lastTotal) / Double(lastExpected)) : 0
        let filled = Int(fraction * Double(width))
        let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
        let seconds = max(Date().timeIntervalSince(startedAt), 0.001)
        let rate = Double(max(0, lastTotal - baseline)) / seconds / 1_048_576
        let line = String(format: "\r%@ %@ %5.1f%% %8.1f MiB %7.1f MiB/s", label, bar, fraction * 100, Double(lastTotal) / 1_048_576, rate)
        Console.progress(line)
    }
}
