import Foundation
import XCTest

/// Real proxies on free loopback ports, for the proxy tests: tinyproxy (HTTP
/// and CONNECT, optionally with Basic authentication) and Dante's danted
/// (SOCKS5). Unlike the other fixtures, a missing binary always fails the
/// run: `scripts/install-deps.sh` installs both, and proxy support must not
/// go untested quietly.
enum ProxyFixtures {
    static func requireBinary(_ name: String, package: String, _ candidates: [String]) throws -> String {
        for path in candidates where FileManager.default.isExecutableFile(atPath: path) { return path }
        let message = "\(name) is not installed (looked in \(candidates.joined(separator: ", "))); install the \(package) package (scripts/install-deps.sh)"
        XCTFail(message)
        throw NSError(domain: "ProxyFixtures", code: 1, userInfo: [NSLocalizedDescriptionKey: message])
    }

    /// Starts `executable` with `arguments`, waits (bounded) for `port`.
    static func start(_ executable: String, _ arguments: [String], port: Int, log: URL, what: String) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try Fixtures.launch(process)
        guard Fixtures.waitForPort(port) else {
            Fixtures.stop(process)
            let detail = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            throw NSError(domain: "ProxyFixtures", code: 2, userInfo: [NSLocalizedDescriptionKey: "\(what) did not start: \(detail)"])
        }
        return process
    }

    /// Whether `file` shows `text` within `timeout` (proxies log after the fact).
    static func logShows(_ file: URL, _ text: String, timeout: TimeInterval) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        func contents() -> String { (try? String(contentsOf: file, encoding: .utf8)) ?? "" }
        while !contents().contains(text) && Date() < deadline { usleep(10_000) }
        return contents().contains(text)
    }
}

/// tinyproxy: forwards http requests and opens CONNECT tunnels to any port.
final class TinyproxyFixture {
    let port: Int
    let directory: URL
    private let process: Process
    var log: URL { directory.appendingPathComponent("tinyproxy.log") }

    /// With `credentials`, every request must carry Basic proxy credentials
    /// of one of these users (407 otherwise).
    init(credentials: [(user: String, password: String)] = []) throws {
        let tinyproxy = try ProxyFixtures.requireBinary("tinyproxy", package: "tinyproxy", ["/usr/bin/tinyproxy", "/usr/sbin/tinyproxy"])
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("afn-tinyproxy-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        port = Fixtures.freePort()
        var config = """
        Port \(port)
        Listen 127.0.0.1
        Timeout 30
        MaxClients 64
        LogFile "\(directory.path)/tinyproxy.log"
        LogLevel Info
        Allow 127.0.0.1
        DisableViaHeader Yes

        """
        for credential in credentials { config += "BasicAuth \(credential.user) \(credential.password)\n" }
        let configURL = directory.appendingPathComponent("tinyproxy.conf")
        try config.write(to: configURL, atomically: true, encoding: .utf8)
        process = try ProxyFixtures.start(tinyproxy, ["-d", "-c", configURL.path], port: port, log: directory.appendingPathComponent("tinyproxy.log"),
                                          what: "tinyproxy")
    }

    /// The dictionary sending http and https requests through this proxy.
    var dictionary: [AnyHashable: Any] {
        ["HTTPEnable": true, "HTTPProxy": "127.0.0.1", "HTTPPort": port,
         "HTTPSEnable": true, "HTTPSProxy": "127.0.0.1", "HTTPSPort": port]
    }

    func logShows(_ text: String, timeout: TimeInterval = 3) -> Bool { ProxyFixtures.logShows(log, text, timeout: timeout) }

    /// The CONNECT requests logged so far (tinyproxy logs each as it reads
    /// it, before it answers), refused ones included.
    var connectRequests: [Substring] {
        let contents = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        return contents.split(separator: "\n").filter { $0.contains("): CONNECT ") }
    }

    func stop() {
        Fixtures.stop(process)
        try? FileManager.default.removeItem(at: directory)
    }
}

/// Dante's danted as a SOCKS5 proxy without authentication, logging each connect.
final class DanteFixture {
    let port: Int
    let directory: URL
    private let process: Process
    var log: URL { directory.appendingPathComponent("danted.log") }

    init() throws {
        let danted = try ProxyFixtures.requireBinary("danted", package: "dante-server", ["/usr/sbin/danted", "/usr/bin/danted"])
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("afn-danted-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        port = Fixtures.freePort()
        let unprivileged = getuid() == 0 ? "user.unprivileged: nobody\n" : ""
        let config = """
        logoutput: \(directory.path)/danted.log
        internal: 127.0.0.1 port = \(port)
        external: 127.0.0.1
        socksmethod: none
        clientmethod: none
        \(unprivileged)client pass { from: 127.0.0.0/8 to: 0.0.0.0/0 }
        socks pass { from: 127.0.0.0/8 to: 0.0.0.0/0 log: connect }

        """
        let configURL = directory.appendingPathComponent("danted.conf")
        try config.write(to: configURL, atomically: true, encoding: .utf8)
        // In a session of its own (setsid -w keeps it a child, so stopping
        // it works as for the other fixtures): started in the test process's
        // session, danted left Foundation's `Process.waitUntilExit()` of
        // every process started after it waiting forever.
        let setsid = try ProxyFixtures.requireBinary("setsid", package: "util-linux", ["/usr/bin/setsid", "/bin/setsid"])
        process = try ProxyFixtures.start(setsid, ["-w", danted, "-f", configURL.path, "-p", directory.appendingPathComponent("danted.pid").path],
                                          port: port, log: directory.appendingPathComponent("danted.log"), what: "danted")
    }

    var dictionary: [AnyHashable: Any] { ["SOCKSEnable": 1, "SOCKSProxy": "127.0.0.1", "SOCKSPort": port] }

    func logShows(_ text: String, timeout: TimeInterval = 3) -> Bool { ProxyFixtures.logShows(log, text, timeout: timeout) }

    /// setsid does not pass signals on: danted itself is stopped by its pid
    /// file (it ends its own children), then setsid returns.
    func stop() {
        let pidFile = directory.appendingPathComponent("danted.pid")
        if let text = try? String(contentsOf: pidFile, encoding: .utf8), let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)), pid > 1 {
            kill(pid, SIGTERM)
            let deadline = Date().addingTimeInterval(5)
            while process.isRunning, Date() < deadline { usleep(20_000) }
            if process.isRunning { kill(pid, SIGKILL) }
        }
        Fixtures.stop(process)
        try? FileManager.default.removeItem(at: directory)
    }
}
