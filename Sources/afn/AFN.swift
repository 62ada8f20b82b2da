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
        discussion: ExitStatus.discussion,
        subcommands: [Get.self, Post.self, Put.self, Download.self, Batch.self, Reach.self, Demo.self]
    )
}

/// Where every block of the tool runs: the main thread only waits.
let callbackQueue = DispatchQueue(label: "afn.callbacks")
