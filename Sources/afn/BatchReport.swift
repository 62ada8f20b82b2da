@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation

/// The results of a batch as they arrive, and the progress line they drive:
/// `37/120 done, 2 failed` on stderr, redrawn in place (at most every 100 ms)
/// when stderr is a terminal, written once at the end otherwise.
final class BatchTally: Sendable {
    private let state: LockedState<State>

    private struct State {
        var slots: [BatchResult?]
        var done = 0
        var failed = 0
        var lastDraw = Date.distantPast

        var line: String { "\(done)/\(slots.count) done, \(failed) failed" }
    }

    init(count: Int) { state = LockedState(State(slots: Array(repeating: nil, count: count))) }

    // The progress line is written under the lock, so an older count never
    // overwrites a newer one on the terminal.

    /// Stores the result for the URL at `index` and redraws the progress line.
    func record(_ result: BatchResult, at index: Int) {
        state.withLock { state in
            state.slots[index] = result
            state.done += 1
            if result.exitCode != ExitStatus.success { state.failed += 1 }
            if Console.stderrIsTerminal, state.done == state.slots.count || Date().timeIntervalSince(state.lastDraw) >= 0.1 {
                state.lastDraw = Date()
                Console.progress("\r\(state.line)\u{1B}[K")
            }
        }
    }

    /// Ends the progress line.
    func finishProgress() {
        state.withLock { state in
            Console.progress(Console.stderrIsTerminal ? "\r\(state.line)\u{1B}[K\n" : "\(state.line)\n")
        }
    }

    /// The results in input order (a URL that never reported counts as failed).
    var results: [BatchResult] {
        state[\.slots].map {
            $0 ?? BatchResult(url: "?", id: "?", status: nil, bytes: 0, seconds: 0, outcome: "failed", file: nil, resumedFrom: nil,
                        error: "no result", exitCode: ExitStatus.other)
        }
    }
}

/// The summary printed at the end of a batch, on stdout.
enum BatchReport {
    /// A table (URL, STATUS, BYTES, TIME, OUTCOME, ERROR) or, with `json`,
    /// one JSON object per line.
    static func print(_ results: [BatchResult], json: Bool) {
        if json {
            for result in results { Console.outLine(JSONText.line(object(result))) }
            return
        }
        let rows = results.map { result in
            [result.url,
             result.status.map(String.init) ?? "-",
             String(result.bytes),
             String(format: "%.3fs", result.seconds),
             result.outcome,
             result.error ?? ""]
        }
        let header = ["URL", "STATUS", "BYTES", "TIME", "OUTCOME", "ERROR"]
        let widths = (0..<header.count).map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        for row in [header] + rows {
            let cells = row.enumerated().map { column, cell in
                // Numbers right-aligned, text left-aligned; the last column unpadded.
                if column == row.count - 1 { return cell }
                let padding = String(repeating: " ", count: widths[column] - cell.count)
                return column == 2 || column == 3 ? padding + cell : cell + padding
            }
            Console.outLine(cells.joined(separator: "  ").trimmingCharacters(in: .whitespaces))
        }
        let succeeded = results.filter { $0.exitCode == ExitStatus.success }.count
        let skipped = results.filter { $0.outcome == "skipped" }.count
        let failed = results.count - succeeded - skipped
        Console.outLine("\(results.count) URLs, \(succeeded) succeeded, \(failed) failed" + (skipped > 0 ? ", \(skipped) skipped" : ""))
    }

    private static func object(_ result: BatchResult) -> [String: Any] {
        [
            "url": result.url,
            "status": JSONText.orNull(result.status),
            "bytes": result.bytes,
            "time": result.seconds,
            "id": result.id,
            "outcome": result.outcome,
            "file": JSONText.orNull(result.file),
            "resumedFrom": JSONText.orNull(result.resumedFrom.map { Int($0) }),
            "error": JSONText.orNull(result.error),
            "exitCode": Int(result.exitCode),
        ]
    }
}
