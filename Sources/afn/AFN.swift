import AFNetworking
import ArgumentParser
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `afn`: a command-line HTTP client built on AFNetworking's operations and
/// session manager. One subcommand per file; the options the request commands
/// share are option groups (`RequestOptions`, `TLSOptions`, `ResponseOptions`).
/// Exit statuses follow curl's numbers; the table is `ExitStatus`.
@main
struct AFN: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "afn",
        abstract: "An HTTP client built on AFNetworking for Linux.",
        discussion: AFN.cacheNote + "\n\n" + ExitStatus.discussion,
        subcommands: [Get.self, Post.self, Put.self, Download.self, Batch.self, Reach.self, Demo.self]
    )

    /// Ignores SIGPIPE before anything runs: a write to a pipe or FIFO whose
    /// reader left (`afn get URL | head -c 100`, `-o fifo`) then fails with
    /// EPIPE and the tool exits 23, as curl does, instead of dying of the signal.
    static func main() {
        signal(SIGPIPE, SIG_IGN)
        main(nil)
    }
}

/// Where every block of the tool runs: the main thread only waits.
let callbackQueue = DispatchQueue(label: "afn.callbacks")

extension AFN {
    /// Said in `afn --help`: unlike curl, get, post and put keep a response cache on disk.
    static let cacheNote = """
        Cache: get, post and put keep responses as HTTP allows in ~/.cache/org.swift.foundation.URLCache/afn \
        ($XDG_CACHE_HOME instead of ~/.cache when set) and revalidate them on every run: a stored response is used \
        only after the server confirms it is current (a 304), never as fresh by itself (no max-age, no Last-Modified \
        heuristic), so the output is what curl would print. --no-cache neither uses nor fills it.
        A URL without a scheme is http: example.org/x means http://example.org/x.
        """
}
