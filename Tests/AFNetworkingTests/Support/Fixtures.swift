import Foundation
import XCTest

/// Starts real servers (nginx, httpbin under gunicorn) on free loopback ports
/// for interop tests. A missing binary fails the test, everywhere: a skipped
/// interop test would let the run pass without checking anything.
enum Fixtures {

    /// A test fixture (binary, server, the `afn` executable) is missing: the error
    /// the test throws, which fails it with `message`.
    struct MissingPrerequisite: Error, CustomStringConvertible {
        let description: String
    }

    static func requireBinary(_ name: String, _ candidates: [String]) throws -> String {
        for path in candidates where FileManager.default.isExecutableFile(atPath: path) { return path }
        throw MissingPrerequisite(description:
            "\(name) is not installed (looked in \(candidates.joined(separator: ", "))); run `make test` to install it")
    }

    /// A port that refuses every connection for the whole test process: a
    /// socket bound to it and never listening is kept open, so no server can
    /// take the port and no pooled connection to it can exist. (A port from
    /// `freePort()` may be one a test's server listened on a moment ago, and
    /// libcurl may still hold a keep-alive connection to it: a request meant
    /// to be refused then went out on that connection.)
    static let refusedPort: Int = {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        precondition(withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } } == 0,
                     "binding the refusing socket")
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        return Int(UInt16(bigEndian: address.sin_port))
    }()

    /// A port nothing listens on right now (bind to 0, read it, close).
    static func freePort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Waits (bounded) until something accepts TCP connections on `port`.
    static func waitForPort(_ port: Int, timeout: TimeInterval = 15) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            let result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            close(fd)
            if result == 0 { return true }
            usleep(50_000)
        }
        return false
    }

    /// Starts `process` from a thread whose signal mask is empty.
    ///
    /// Foundation's `Process` spawns without resetting the signal mask, so a
    /// server started from an async test (a cooperative-pool thread, which
    /// blocks most signals) inherited a blocked SIGTERM: gunicorn then never
    /// honoured `terminate()` and `stop()` waited forever.
    static func launch(_ process: Process) throws {
        final class Outcome: @unchecked Sendable {
            // @unchecked: written by the spawning thread before `done` is
            // signalled, read by the caller only after waiting on it.
            var error: Error?
            let process: Process
            init(_ process: Process) { self.process = process }
        }
        let outcome = Outcome(process)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            var empty = sigset_t()
            sigemptyset(&empty)
            pthread_sigmask(SIG_SETMASK, &empty, nil)
            do { try outcome.process.run() } catch { outcome.error = error }
            done.signal()
        }
        thread.start()
        done.wait()
        if let error = outcome.error { throw error }
    }

    /// Stops a server: SIGTERM, then SIGKILL for it and the children it had
    /// if it has not exited within `grace` seconds.
    static func stop(_ process: Process, grace: TimeInterval = 5) {
        guard process.isRunning else { return }
        let pid = process.processIdentifier
        let children = (try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8))?
            .split(separator: " ").compactMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) } ?? []
        process.terminate()
        let deadline = Date().addingTimeInterval(grace)
        while process.isRunning, Date() < deadline { usleep(20_000) }
        if process.isRunning {
            for child in children { kill(child, SIGKILL) }
            kill(pid, SIGKILL)
        }
        process.waitUntilExit()
    }

    @discardableResult
    static func run(_ path: String, _ arguments: [String]) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }
}

/// nginx serving a generated document root over HTTP/1.1 and over TLS with
/// HTTP/2, with a self-signed certificate for 127.0.0.1 / localhost.
final class NginxFixture {
    let directory: URL
    let httpPort: Int
    let httpsPort: Int
    let certificatePath: String
    private let process: Process

    var httpURL: URL { URL(string: "http://127.0.0.1:\(httpPort)")! }
    var httpsURL: URL { URL(string: "https://localhost:\(httpsPort)")! }
    /// The http server also listens on this Unix domain socket.
    var socketPath: String { directory.appendingPathComponent("nginx.sock").path }
    /// The TLS server (its certificate chain, HTTP/2) also listens on this one.
    var tlsSocketPath: String { directory.appendingPathComponent("nginx-tls.sock").path }
    var accessLog: String { (try? String(contentsOf: directory.appendingPathComponent("access.log"), encoding: .utf8)) ?? "" }

    /// Whether the access log shows `text` within `timeout`: nginx writes a
    /// line after the response, a little later on a busy machine.
    func logShows(_ text: String, timeout: TimeInterval = 3) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !accessLog.contains(text) && Date() < deadline { usleep(10_000) }
        return accessLog.contains(text)
    }

    /// With `chain` (DER certificates, leaf first) and `key` (PEM), TLS serves
    /// that chain; otherwise a fresh self-signed certificate for localhost.
    /// `http2: false`: the TLS server offers HTTP/1.1 only.
    init(chain: [URL]? = nil, key: URL? = nil, http2: Bool = true) throws {
        let nginx = try Fixtures.requireBinary("nginx", ["/usr/sbin/nginx", "/usr/bin/nginx"])
        let openssl = try Fixtures.requireBinary("openssl", ["/usr/bin/openssl"])
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("afn-nginx-\(UUID().uuidString)")
        let root = directory.appendingPathComponent("www")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try Data(repeating: UInt8(ascii: "a"), count: 1024).write(to: root.appendingPathComponent("1k.bin"))
        var big = Data(count: 4 * 1024 * 1024)
        big.withUnsafeMutableBytes { buffer in
            for index in 0..<buffer.count { buffer[index] = UInt8(truncatingIfNeeded: index &* 31 &+ index >> 9) }
        }
        try big.write(to: root.appendingPathComponent("4m.bin"))
        try String(repeating: "hello gzip world ", count: 2000).write(to: root.appendingPathComponent("text.txt"), atomically: true, encoding: .utf8)

        certificatePath = directory.appendingPathComponent("cert.pem").path
        var keyPath = directory.appendingPathComponent("key.pem").path
        if let chain, let key {
            var pem = ""
            for (index, der) in chain.enumerated() {
                let out = directory.appendingPathComponent("chain-\(index).pem").path
                try Fixtures.run(openssl, ["x509", "-inform", "DER", "-in", der.path, "-outform", "PEM", "-out", out])
                pem += try String(contentsOfFile: out, encoding: .utf8)
            }
            try pem.write(toFile: certificatePath, atomically: true, encoding: .utf8)
            keyPath = key.path
        } else {
            try Fixtures.run(openssl, ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "3650", "-subj", "/CN=localhost",
                                       "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
                                       "-keyout", keyPath, "-out", certificatePath])
        }
        httpPort = Fixtures.freePort()
        httpsPort = Fixtures.freePort()
        let h2 = http2 ? " http2" : ""
        let config = """
        worker_processes 1;
        daemon off;
        error_log \(directory.path)/error.log;
        pid \(directory.path)/nginx.pid;
        events { worker_connections 1024; }
        http {
            # nginx's combined format, then the connection's serial number
            # (HTTP2MultiplexingTests counts the connections of a burst).
            log_format afn '$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" conn=$connection';
            access_log \(directory.path)/access.log afn;
            client_body_temp_path \(directory.path)/body;
            proxy_temp_path \(directory.path)/proxy;
            fastcgi_temp_path \(directory.path)/fastcgi;
            uwsgi_temp_path \(directory.path)/uwsgi;
            scgi_temp_path \(directory.path)/scgi;
            keepalive_requests 1000000;
            gzip on;
            gzip_types text/plain;
            gzip_min_length 100;
            types { text/plain txt; application/octet-stream bin; image/png png; image/jpeg jpg; }
            server {
                listen 127.0.0.1:\(httpPort);
                listen unix:\(directory.path)/nginx.sock;
                root \(root.path);
                # The Host header as received, and a relative redirect (for the Unix-socket tests).
                location = /host { default_type text/plain; return 200 "$http_host"; }
                location = /relative-redirect { absolute_redirect off; return 302 /1k.bin; }
                location /status/ { return 500 "boom"; }
                # Slow downloads, for interrupting a process mid-body.
                location /slow/ { alias \(root.path)/; limit_rate 512k; }
                # Trailer fields after the body (chunked on HTTP/1.1).
                location /trailers/ { alias \(root.path)/; add_trailer X-Checksum "sum-1"; add_trailer X-Count "2"; }
                # A redirect to the same file at the root (ImageDownloaderTests).
                location /redirect/ { rewrite ^/redirect/(.*)$ /$1 redirect; }
                # The Cookie header as received (CookieSecureTests).
                location = /cookies/echo { default_type text/plain; return 200 "$http_cookie"; }
                # Secure and prefixed cookies offered over http (CookieSecureTests).
                location = /cookies/secure {
                    add_header Set-Cookie "s$arg_n=1; Secure; Path=/";
                    add_header Set-Cookie "__Secure-$arg_n=2; Secure; Path=/";
                    default_type text/plain; return 200 "set";
                }
            }
            server {
                listen 127.0.0.1:\(httpsPort) ssl\(h2);
                # A second loopback address the test certificates do not name.
                listen 127.0.0.2:\(httpsPort) ssl\(h2);
                # https+unix:// (the Unix-socket tests).
                listen unix:\(directory.path)/nginx-tls.sock ssl\(h2);
                ssl_certificate \(certificatePath);
                ssl_certificate_key \(keyPath);
                root \(root.path);
                location = /host { default_type text/plain; return 200 "$http_host"; }
                # Trailer fields after the body (a trailing HEADERS frame on HTTP/2).
                location /trailers/ { alias \(root.path)/; add_trailer X-Checksum "sum-1"; add_trailer X-Count "2"; }
                # An answer no proxy gives, and a download slow enough to pause.
                location = /teapot { return 418 "short and stout"; }
                # A proxy's status from the origin itself: through a tunnel it
                # is the origin's answer, not a proxy challenge (ProxyTests).
                location = /proxy-challenge {
                    add_header Proxy-Authenticate 'Basic realm="origin"' always;
                    default_type text/plain; return 407 "not a proxy";
                }
                location /slow/ { alias \(root.path)/; limit_rate 1m; }
                # Secure and prefixed cookies, the valid and the invalid, and the
                # Cookie header as received (CookieSecureTests).
                location = /cookies/secure {
                    add_header Set-Cookie "s$arg_n=1; secure=0; Path=/";
                    add_header Set-Cookie "__Secure-$arg_n=2; Secure; Path=/";
                    add_header Set-Cookie "__Host-$arg_n=3; Secure; Path=/";
                    add_header Set-Cookie "__secure-lax$arg_n=4; Path=/";
                    add_header Set-Cookie "__Host-path$arg_n=5; Secure; Path=/cookies";
                    add_header Set-Cookie "__Host-nopath$arg_n=6; Secure";
                    add_header Set-Cookie "__Host-domain$arg_n=7; Secure; Path=/; Domain=localhost";
                    add_header Set-Cookie "__HOST-case$arg_n=8; Path=/";
                    default_type text/plain; return 200 "set";
                }
                location = /cookies/echo { default_type text/plain; return 200 "$http_cookie"; }
            }
        }
        """
        let configPath = directory.appendingPathComponent("nginx.conf")
        try config.write(to: configPath, atomically: true, encoding: .utf8)
        process = Process()
        process.executableURL = URL(fileURLWithPath: nginx)
        process.arguments = ["-c", configPath.path, "-p", directory.path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try Fixtures.launch(process)
        guard Fixtures.waitForPort(httpPort), Fixtures.waitForPort(httpsPort) else {
            process.terminate()
            throw NSError(domain: "Fixtures", code: 1, userInfo: [NSLocalizedDescriptionKey: "nginx did not start: \((try? String(contentsOf: directory.appendingPathComponent("error.log"), encoding: .utf8)) ?? "")"])
        }
    }

    func stop() {
        Fixtures.stop(process)
        try? FileManager.default.removeItem(at: directory)
    }
}

/// httpbin (Debian's python3-httpbin) under gunicorn on a free port.
final class HTTPBinFixture {
    let port: Int
    private let process: Process
    var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    init() throws {
        let gunicorn = try Fixtures.requireBinary("gunicorn", ["/usr/bin/gunicorn", "/usr/bin/gunicorn3"])
        port = Fixtures.freePort()
        process = Process()
        process.executableURL = URL(fileURLWithPath: gunicorn)
        process.arguments = ["--bind", "127.0.0.1:\(port)", "--workers", "2", "--graceful-timeout", "2",
                             "--log-level", "warning", "httpbin:app"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try Fixtures.launch(process)
        guard Fixtures.waitForPort(port, timeout: 30) else {
            process.terminate()
            throw NSError(domain: "Fixtures", code: 2, userInfo: [NSLocalizedDescriptionKey: "httpbin did not start"])
        }
    }

    func stop() {
        Fixtures.stop(process)
    }
}
