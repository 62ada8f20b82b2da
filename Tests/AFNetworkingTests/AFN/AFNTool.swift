import Foundation
import XCTest

/// Runs the real `afn` executable (built next to the test bundle) and
/// captures its exit status, stdout and stderr.
enum AFNTool {
    /// What one run of `afn` produced.
    struct Run {
        let status: Int32
        let stdout: Data
        let stderr: String
        /// Seconds from the launch until stderr first held the `noting` text of `run`, if it did.
        var notedAfter: TimeInterval?
        /// stdout as UTF-8 text.
        var output: String { String(decoding: stdout, as: UTF8.self) }

        /// stdout parsed as one JSON object.
        func json(file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
            let object = try JSONSerialization.jsonObject(with: stdout, options: [.fragmentsAllowed])
            return try XCTUnwrap(object as? [String: Any], "stdout is not a JSON object: \(output)", file: file, line: line)
        }
    }

    /// The executable; a test that needs it fails when it has not been built.
    static func executable() throws -> URL {
        let bundle = Bundle(for: Marker.self).bundleURL
        let candidates = [bundle.appendingPathComponent("afn"), bundle.deletingLastPathComponent().appendingPathComponent("afn")]
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
            throw Fixtures.MissingPrerequisite(description:
                "the afn executable is not built next to the tests (\(candidates[0].path)); run `swift build` first")
        }
        return found
    }

    /// Runs `afn arguments` with `environment` added to the test's, feeding `stdin` (empty when nil); a run still
    /// going after `timeout` seconds is terminated (and its status is then
    /// SIGTERM's).
    /// With `shell`, afn is started by `/bin/sh -c shell afn arguments…` (the
    /// script ends with `exec "$0" "$@"`), to set limits such as `ulimit -f`.
    /// `environment` adds to (or replaces) the test process's variables for
    /// the child only; the proxy variables of the test process are never passed on.
    /// With `noting`, stderr is read as it comes and `Run.notedAfter` says when that text first appeared;
    /// `whenNoted` runs (on a reader thread) at that moment, while afn still runs, so a test can let a
    /// scripted server go on only once afn has printed something (an order, not a time).
    /// `directory`: the working directory (files `-O` names land there), else the test process's.
    static func run(_ arguments: [String], stdin: Data? = nil, timeout: TimeInterval = 60, shell: String? = nil,
                    environment: [String: String] = [:], noting: String? = nil, whenNoted: (@Sendable () -> Void)? = nil,
                    directory: URL? = nil) throws -> Run {
        let process = Process()
        if let directory { process.currentDirectoryURL = directory }
        if let shell {
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", shell, try executable().path] + arguments
        } else {
            process.executableURL = try executable()
            process.arguments = arguments
        }
        var variables = ProcessInfo.processInfo.environment.filter { !$0.key.lowercased().hasSuffix("_proxy") }
        // afn keeps a response cache (under $XDG_CACHE_HOME): each run gets an
        // empty one of its own unless the test passes one, so no run is
        // answered from what another test (or an earlier test run) stored.
        let ownCacheHome = environment["XDG_CACHE_HOME"] == nil
            ? FileManager.default.temporaryDirectory.appendingPathComponent("afn-run-cache-\(UUID().uuidString)") : nil
        defer { if let ownCacheHome { try? FileManager.default.removeItem(at: ownCacheHome) } }
        if let ownCacheHome { variables["XDG_CACHE_HOME"] = ownCacheHome.path }
        variables.merge(environment) { _, new in new }
        process.environment = variables
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        // stdin from a file, never a pipe: a process that exits without reading
        // it cannot make the test process write to a closed pipe.
        if let stdin {
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("afn-stdin-\(UUID().uuidString)")
            try stdin.write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            process.standardInput = try FileHandle(forReadingFrom: file)
        } else {
            process.standardInput = FileHandle.nullDevice
        }
        try Fixtures.launch(process)
        let launchedAt = Date()

        // Both pipes are drained while the process runs, so a full pipe never blocks it.
        let captured = Locked<(out: Data, err: Data)>((Data(), Data()))
        let noted = Locked<TimeInterval?>(nil)
        let readers = DispatchGroup()
        let outHandle = output.fileHandleForReading, errHandle = errors.fileHandleForReading
        DispatchQueue.global().async(group: readers) {
            let data = outHandle.readDataToEndOfFile()
            captured.withLock { $0.out = data }
        }
        DispatchQueue.global().async(group: readers) {
            guard let noting else {
                let data = errHandle.readDataToEndOfFile()
                captured.withLock { $0.err = data }
                return
            }
            var data = Data()
            while true {
                let chunk = errHandle.availableData
                if chunk.isEmpty { break }
                data.append(chunk)
                if noted.value == nil, String(decoding: data, as: UTF8.self).contains(noting) {
                    noted.value = Date().timeIntervalSince(launchedAt)
                    whenNoted?()
                }
            }
            captured.withLock { $0.err = data }
        }
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        _ = readers.wait(timeout: .now() + 10)
        let result = captured.value
        return Run(status: process.terminationStatus, stdout: result.out, stderr: String(decoding: result.err, as: UTF8.self),
                   notedAfter: noted.value)
    }

    /// A file in the temporary directory holding `contents`, removed by the test's teardown.
    static func temporaryFile(_ test: XCTestCase, name: String = "afn-input", contents: Data) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(UUID().uuidString)")
        try contents.write(to: url)
        test.addTeardownBlock { try? FileManager.default.removeItem(at: url) }
        return url
    }

    /// Locates the test bundle.
    private final class Marker {}
}
