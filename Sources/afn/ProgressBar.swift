@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation

/// A one-line progress bar on stderr, redrawn at most every 100 ms.
final class ProgressBar: Sendable {
    private let label: String
    private let state = LockedState(State())

    private struct State {
        var lastDraw = Date.distantPast
        var lastTotal: Int64 = 0
        var lastExpected: Int64 = -1
        /// Bytes that were already there when the transfer (re)started: the bar
        /// starts there, and the rate counts only what arrives now.
        var baseline: Int64 = 0
        var startedAt = Date()
        /// Whether the baseline is known (set by the first `update(_:of:read:)`).
        var started = false
    }

    init(label: String) { self.label = label }

    // The bar is drawn under the lock: a redraw computed before another one
    // must not reach the terminal after it (the last line written is the one
    // that stays on screen).

    /// Progress of an operation whose counts are absolute (a resumed one
    /// reports from the entity's first byte): the first report fixes where
    /// this run started, `total - bytes`, so the bar starts there and the
    /// rate counts only what this run received.
    func update(_ total: Int64, of expected: Int64, read bytes: Int) {
        state.withLock { state in
            if !state.started {
                state.started = true
                state.baseline = max(0, total - Int64(bytes))
                state.startedAt = Date()
            }
        }
        update(total, of: expected)
    }

    func update(_ total: Int64, of expected: Int64) {
        state.withLock { state in
            state.lastTotal = total
            state.lastExpected = expected
            if Date().timeIntervalSince(state.lastDraw) >= 0.1 { draw(&state) }
        }
    }

    func finish() {
        state.withLock { state in
            if state.lastTotal > 0 { draw(&state); Console.progress("\n") }
        }
    }

    private func draw(_ state: inout State) {
        state.lastDraw = Date()
        let width = 30
        let fraction = state.lastExpected > 0 ? min(1, Double(state.lastTotal) / Double(state.lastExpected)) : 0
        let filled = Int(fraction * Double(width))
        let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
        let seconds = max(Date().timeIntervalSince(state.startedAt), 0.001)
        let rate = Double(max(0, state.lastTotal - state.baseline)) / seconds / 1_048_576
        let line = String(format: "\r%@ %@ %5.1f%% %8.1f MiB %7.1f MiB/s", label, bar, fraction * 100,
                          Double(state.lastTotal) / 1_048_576, rate)
        Console.progress(line)
    }
}
