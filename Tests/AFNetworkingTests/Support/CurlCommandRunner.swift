import Foundation

/// Runs a `cURLDescription()` with /bin/sh and the real curl, as a user
/// pasting it would: no proxy variables, no ~/.curlrc, output discarded.
enum CurlCommandRunner {
    /// The command's exit status; a run still going after 30 s is terminated.
    static func run(_ command: String) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command + " >/dev/null 2>&1"]
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.lowercased().hasSuffix("_proxy") }
        environment["CURL_HOME"] = "/nonexistent"
        process.environment = environment
        try Fixtures.launch(process)
        let deadline = Date().addingTimeInterval(30)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        return process.terminationStatus
    }
}
