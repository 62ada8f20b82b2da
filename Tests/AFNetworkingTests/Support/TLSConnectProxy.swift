import Foundation
import XCTest

/// An HTTPS proxy (TLS to the proxy itself, then `CONNECT` tunnels) on a free
/// loopback port, for the proxy-trust test: neither tinyproxy nor Dante
/// speaks TLS to its clients, and Debian's nginx has no stream module, so
/// this is Python's `ssl` and sockets, written out and started per test. It
/// presents `identity`'s certificate (nginx's self-signed one: trusted only
/// where that file is given) and logs each request line it reads, and each
/// handshake its client abandoned.
final class TLSConnectProxy {
    let port: Int
    let directory: URL
    let certificatePath: String
    private let process: Process
    private var logURL: URL { directory.appendingPathComponent("proxy.log") }

    /// What the proxy logged so far.
    var log: String { (try? String(contentsOf: logURL, encoding: .utf8)) ?? "" }

    init(identity: NginxFixture) throws {
        let python = try ProxyFixtures.requireBinary("python3", package: "python3", ["/usr/bin/python3"])
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("afn-tls-proxy-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        certificatePath = identity.certificatePath
        port = Fixtures.freePort()
        let script = directory.appendingPathComponent("proxy.py")
        try Self.script.write(to: script, atomically: true, encoding: .utf8)
        let key = identity.directory.appendingPathComponent("key.pem").path
        let log = directory.appendingPathComponent("proxy.log")
        process = try ProxyFixtures.start(python, [script.path, identity.certificatePath, key, String(port), log.path],
                                          port: port, log: log, what: "the TLS CONNECT proxy")
    }

    func logShows(_ text: String, timeout: TimeInterval = 3) -> Bool { ProxyFixtures.logShows(logURL, text, timeout: timeout) }

    func stop() {
        Fixtures.stop(process)
        try? FileManager.default.removeItem(at: directory)
    }

    /// One thread per client; a tunnel relays both ways until either side
    /// closes (select over the two sockets, TLS records already decrypted
    /// drained through `pending()`). Every wait is bounded by socket timeouts.
    private static let script = #"""
    import select, socket, ssl, sys, threading

    cert, key, port, log_path = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    lock = threading.Lock()

    def log(line):
        with lock, open(log_path, "a") as f:
            f.write(line + "\n")

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(64)

    def relay(client, upstream):
        sockets = [client, upstream]
        while True:
            ready = [client] if client.pending() else select.select(sockets, [], [], 30)[0]
            if not ready:
                return
            for source in ready:
                target = upstream if source is client else client
                data = source.recv(65536)
                if not data:
                    return
                target.sendall(data)

    def serve(raw):
        raw.settimeout(30)
        try:
            client = context.wrap_socket(raw, server_side=True)
        except (ssl.SSLError, OSError) as error:
            log("handshake abandoned: %s" % error.__class__.__name__)
            raw.close()
            return
        try:
            head = b""
            while b"\r\n\r\n" not in head:
                data = client.recv(4096)
                if not data:
                    return
                head += data
            line = head.split(b"\r\n", 1)[0].decode("latin-1")
            log(line)
            parts = line.split(" ")
            if len(parts) != 3 or parts[0] != "CONNECT":
                client.sendall(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                return
            host, _, target_port = parts[1].rpartition(":")
            upstream = socket.create_connection((host.strip("[]"), int(target_port)), timeout=30)
            client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            try:
                relay(client, upstream)
            finally:
                upstream.close()
        except (ssl.SSLError, OSError, ValueError):
            pass
        finally:
            client.close()

    while True:
        connection, _ = listener.accept()
        threading.Thread(target=serve, args=(connection,), daemon=True).start()
    """#
}
