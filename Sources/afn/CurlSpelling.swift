import ArgumentParser

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
