// A small program as a new user would write it in a Swift 6 package: top-level
// code (main-actor isolated) and an actor, both handing closures to
// AFNetworking that run on a custom completion queue. Before the public blocks
// were @Sendable, Swift 6 inferred such closures as isolated to where they were
// written and the runtime's isolation check crashed the process when they ran
// on the completion queue. The test suite runs this program against a local
// server and expects exit status 0.
//
//   swift6-caller <url>

import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

guard CommandLine.arguments.count == 2, let url = URL(string: CommandLine.arguments[1]) else {
    FileHandle.standardError.write(Data("usage: swift6-caller URL\n".utf8))
    exit(2)
}

let callbacks = DispatchQueue(label: "swift6-caller.callbacks")
let done = DispatchSemaphore(value: 0)

// 1. Top-level code.
let operation = HTTPRequestOperation(request: URLRequest(url: url))
operation.completionQueue = callbacks
operation.setDownloadProgressBlock { _, total, _ in
    precondition(total >= 0)
}
operation.setCompletionBlockWithSuccess({ operation, _ in
    print("top-level: \(operation.response?.statusCode ?? 0) on \(Thread.isMainThread ? "main" : "callbacks")")
    done.signal()
}, failure: { _, error in
    print("top-level failed: \(error)")
    exit(1)
})
operation.start()
done.wait()

// 2. An actor, through the manager.
actor Client {
    private(set) var statuses: [Int] = []

    func fetch(_ url: URL, on queue: DispatchQueue) async -> Int {
        let status = await withCheckedContinuation { (continuation: CheckedContinuation<Int, Never>) in
            let manager = HTTPRequestOperationManager()
            manager.responseSerializer = HTTPResponseSerializer()
            manager.completionQueue = queue
            manager.get(url.absoluteString, parameters: nil, success: { operation, _ in
                continuation.resume(returning: operation.response?.statusCode ?? 0)
            }, failure: { _, _ in
                continuation.resume(returning: -1)
            })
        }
        statuses.append(status)
        return status
    }
}

let client = Client()
let finished = DispatchSemaphore(value: 0)
Task.detached {
    let status = await client.fetch(url, on: callbacks)
    print("actor: \(status)")
    exit(status == 200 ? 0 : 1)
}
finished.wait()
