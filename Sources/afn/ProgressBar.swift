import Foundation

/// A one-line progress bar on stderr, redrawn at most every 100 ms.
final class ProgressBar: @unchecked Sendable {
    private let label: String
    private let started = Date()
    private var lastDraw = Date.distantPast
    private var lastTotal: Int64 = 0
    private var lastExpected: Int64 = -1
    private let lock = NSLock()

    init(label: String) { self.label = label }

    func update(_ total: Int64, of expected: Int64) {
        lock.lock(); defer { lock.unlock() }
        lastTotal = total
        lastExpected = expected
        if Date().timeIntervalSince(lastDraw) >= 0.1 { draw() }
    }

    func finish() {
        lock.lock(); defer { lock.unlock() }
        if lastTotal > 0 { draw(); FileHandle.standardError.write(Data("\n".utf8)) }
    }

    private func draw() {
        lastDraw = Date()
        let width = 30
        let fraction = lastExpected > 0 ? min(1, Double(lastTotal) / Double(lastExpected)) : 0
        let filled = Int(fraction * Double(width))
        let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
        let seconds = max(Date().timeIntervalSince(started), 0.001)
        let rate = Double(lastTotal) / seconds / 1_048_576
        let line = String(format: "\r%@ %@ %5.1f%% %8.1f MiB %7.1f MiB/s", label, bar, fraction * 100, Double(lastTotal) / 1_048_576, rate)
        FileHandle.standardError.write(Data(line.utf8))
    }
}
