import ArgumentParser
import Foundation

/// curl options `afn` takes with curl's meaning where afn has the same
/// thing under another name (`-C -` is `--resume`) or as its only behaviour
/// (`-L`, and `-f` in `batch` and `download`): a script written for curl
/// runs unchanged instead of failing on an unknown option.
enum CurlSpelling {
    /// `-C`'s help: automatic resume only.
    static let continueAtHelp = ArgumentHelp(
        "'-': continue where an earlier run stopped (curl's -C -); an offset is not taken.", valueName: "-")

    /// curl's `-C OFFSET` would append one entity's bytes to whatever the
    /// file holds; afn continues only from its own partial file (`-C -`).
    static func validateContinueAt(_ value: String?) throws {
        guard let value, value != "-" else { return }
        throw ValidationError("-C takes '-' (continue where the partial file ends), not an offset: \(value)")
    }
}

extension CurlSpelling {
    /// `--limit-rate`'s help.
    static let limitRateHelp = ArgumentHelp(
        "Cap the download rate in bytes per second, curl's spelling: 100K, 1.5M, 1G (1024-based), or plain bytes; 0: none.",
        valueName: "rate")

    /// curl's rate spelling: a number (a fraction allowed) and an optional
    /// k/m/g/t suffix, each 1024 times the one before. nil when it is not one.
    static func rate(_ text: String) -> Int64? {
        var number = Substring(text.trimmingCharacters(in: .whitespaces))
        var factor: Double = 1
        if let last = number.last, let power = ["k": 1, "m": 2, "g": 3, "t": 4][last.lowercased()] {
            factor = pow(1024, Double(power))
            number = number.dropLast()
        }
        guard !number.isEmpty, number.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
              let value = Double(number), value.isFinite else { return nil }
        let bytes = (value * factor).rounded(.down)
        guard bytes < Double(Int64.max) else { return nil }
        return Int64(bytes)
    }
}
