// A program that waits for an operation on the main actor, as a newcomer's
// command-line tool does: `waitUntilFinished()` from main-actor code that runs
// on the main queue (after `dispatchMain()`, or after a top-level `await`),
// with the success block on the default completion queue (main). The test
// suite runs it under a time limit; it must print its line and exit 0.
//
// (The top-level `await` below makes all of main.swift async: both modes run
// their main-actor code on the main queue, the way the runtime drains it.)
//
//   main-actor-waiter dispatch-main|top-level-await <url>

import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

guard CommandLine.arguments.count == 3, let url = URL(string: CommandLine.arguments[2]) else {
    FileHandle.standardError.write(Data("usage: main-actor-waiter dispatch-main|top-level-await URL\n".utf8))
    exit(2)
}

/// Starts an operation and waits for it on the calling (main) actor; the
/// success block has run once the wait returns.
@MainActor
func fetchAndWait(_ label: String) {
    let operation = HTTPRequestOperation(request: URLRequest(url: url))
    let delivered = DeliveredFlag()
    operation.setCompletionBlockWithSuccess({ _, _ in delivered.set() }, failure: { _, _ in delivered.set() })
    operation.start()
    operation.waitUntilFinished()
    print("\(label): \(operation.response?.statusCode ?? 0) delivered=\(delivered.value)")
}

/// Set by the success or failure block (on the main queue).
final class DeliveredFlag: @unchecked Sendable {
    // @unchecked: written and read under `lock` only.
    private let lock = NSLock()
    private var flag = false
    func set() { lock.withLock { flag = true } }
    var value: Bool { lock.withLock { flag } }
}

switch CommandLine.arguments[1] {
case "dispatch-main":
    Task { @MainActor in
        fetchAndWait("dispatch-main")
        exit(0)
    }
    dispatchMain()
case "top-level-await":
    await Task.yield()
    try? await Task.sleep(nanoseconds: 1_000_000)
    fetchAndWait("top-level-await")
    exit(0)
default:
    exit(2)
}
