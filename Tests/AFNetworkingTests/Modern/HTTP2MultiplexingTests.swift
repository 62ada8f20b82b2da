@testable import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// A burst of requests to an HTTP/2 origin over TLS waits for the connection
/// being set up and shares it as streams (curl's `CURLOPT_PIPEWAIT`) instead
/// of opening one connection and TLS handshake per request; connections stay
/// inside their security policy's partition; requests to an HTTP/1.1 origin
/// over TLS go on once its first connection answers without HTTP/2. Counted by the server: nginx logs each
/// request's connection serial number (`$connection`).
///
/// Each test starts its own nginx, so no connection from an earlier test can
/// be reused: the burst is what opens them.
final class HTTP2MultiplexingTests: XCTestCase {
    private var nginx: NginxFixture?

    override func tearDown() {
        nginx?.stop()
        nginx = nil
    }

    private func startNginx(http2: Bool = true) throws -> NginxFixture {
        let directory = TestPKI.directory
        let fixture = try NginxFixture(chain: [directory.appendingPathComponent("leaf-localhost.cer"),
                                               directory.appendingPathComponent("intermediate-ca.cer")],
                                       key: directory.appendingPathComponent("keys/leaf-localhost.key.pem"), http2: http2)
        nginx = fixture
        return fixture
    }

    /// Trusts the test PKI's root on top of the system store (a separate partition from the default policy).
    private func privateCAPolicy() -> SecurityPolicy {
        let policy = SecurityPolicy.default()
        policy.additionalTrustedCertificates = [TestPKI.root]
        return policy
    }

    /// Trusts the root and pins it too: another policy, so another partition.
    private func pinnedRootPolicy() -> SecurityPolicy {
        let policy = SecurityPolicy(pinningMode: .certificate)
        policy.additionalTrustedCertificates = [TestPKI.root]
        policy.pinnedCertificates = [TestPKI.root]
        return policy
    }

    private struct Sent {
        let marker: String
        let errors: [NSError]
    }

    /// Hands `count` GETs per policy to one queue that runs them all at once,
    /// waits (bounded) for every one to end, and returns each burst's marker
    /// and the errors seen.
    private func burst(_ count: Int, to nginx: NginxFixture, policies: [SecurityPolicy]) -> [Sent] {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = count * policies.count
        let group = DispatchGroup()
        let callbacks = DispatchQueue(label: "HTTP2MultiplexingTests.callbacks")
        let errors = Locked<[Int: [NSError]]>([:])
        var markers: [String] = []
        var operations: [HTTPRequestOperation] = []
        for (index, policy) in policies.enumerated() {
            let marker = "h2burst-\(index)-\(UUID().uuidString)"
            markers.append(marker)
            for request in 0..<count {
                var urlRequest = URLRequest(url: URL(string: "https://localhost:\(nginx.httpsPort)/1k.bin?\(marker)=\(request)")!)
                urlRequest.timeoutInterval = 20
                urlRequest.cachePolicy = .reloadIgnoringLocalCacheData
                let operation = HTTPRequestOperation(request: urlRequest)
                operation.securityPolicy = policy
                operation.completionQueue = callbacks
                group.enter()
                operation.setCompletionBlockWithSuccess({ _, _ in group.leave() }, failure: { _, error in
                    errors.withLock { $0[index, default: []].append(error as NSError) }
                    group.leave()
                })
                operations.append(operation)
            }
        }
        queue.addOperations(operations, waitUntilFinished: false)
        XCTAssertEqual(group.wait(timeout: .now() + 60), .success, "every request of the burst ends")
        return markers.enumerated().map { index, marker in Sent(marker: marker, errors: errors.withLock { $0[index] ?? [] }) }
    }

    /// The access-log lines of the requests carrying `marker` (waiting, bounded, for `count` of them).
    private func loggedLines(_ marker: String, count: Int, in nginx: NginxFixture) -> [Substring] {
        let deadline = Date().addingTimeInterval(5)
        var lines: [Substring] = []
        repeat {
            lines = nginx.accessLog.split(separator: "\n").filter { $0.contains(marker) }
            if lines.count >= count { break }
            usleep(10_000)
        } while Date() < deadline
        return lines
    }

    /// The connection serial numbers (`conn=N`) of `lines`.
    private func connections(_ lines: [Substring]) -> Set<Substring> {
        Set(lines.compactMap { line in line.range(of: "conn=").map { line[$0.upperBound...] } })
    }

    func testABurstToAnHTTP2OriginSharesOneConnection() throws {
        let nginx = try startNginx()
        let count = 32
        let sent = burst(count, to: nginx, policies: [privateCAPolicy()])
        XCTAssertEqual(sent[0].errors, [])
        let lines = loggedLines(sent[0].marker, count: count, in: nginx)
        XCTAssertEqual(lines.count, count, nginx.accessLog)
        XCTAssertTrue(lines.allSatisfy { $0.contains("HTTP/2.0\"") }, "every request went over HTTP/2: \(lines)")
        XCTAssertEqual(connections(lines).count, 1, "one TLS connection for the whole burst: \(lines)")
    }

    func testEachPolicyMultiplexesOnItsOwnConnection() throws {
        let nginx = try startNginx()
        let count = 16
        let sent = burst(count, to: nginx, policies: [privateCAPolicy(), pinnedRootPolicy()])
        var seen: [Set<Substring>] = []
        for burst in sent {
            XCTAssertEqual(burst.errors, [])
            let lines = loggedLines(burst.marker, count: count, in: nginx)
            XCTAssertEqual(lines.count, count, nginx.accessLog)
            seen.append(connections(lines))
        }
        XCTAssertEqual(seen[0].count, 1, "the private-CA policy's burst shares one connection: \(seen)")
        XCTAssertEqual(seen[1].count, 1, "the pinning policy's burst shares one connection: \(seen)")
        XCTAssertTrue(seen[0].isDisjoint(with: seen[1]), "no stream crosses from one policy's connection to the other's: \(seen)")
    }

    func testASessionManagersBurstSharesOneConnection() throws {
        let nginx = try startNginx()
        let configuration = URLSessionConfiguration.default
        // Requests in flight per host: on HTTP/2, streams of the one connection.
        configuration.httpMaximumConnectionsPerHost = 6
        let manager = HTTPSessionManager(baseURL: nil, sessionConfiguration: configuration)
        defer { manager.invalidateSessionCancelingTasks(true) }
        manager.securityPolicy = privateCAPolicy()
        manager.responseSerializer = HTTPResponseSerializer()
        manager.completionQueue = DispatchQueue(label: "HTTP2MultiplexingTests.session")
        let marker = "h2session-\(UUID().uuidString)"
        let count = 24
        let group = DispatchGroup()
        let errors = Locked<[NSError]>([])
        for index in 0..<count {
            var request = URLRequest(url: URL(string: "https://localhost:\(nginx.httpsPort)/1k.bin?\(marker)=\(index)")!)
            request.timeoutInterval = 20
            request.cachePolicy = .reloadIgnoringLocalCacheData
            group.enter()
            manager.dataTask(with: request) { _, _, error in
                if let error { errors.withLock { $0.append(error as NSError) } }
                group.leave()
            }.resume()
        }
        XCTAssertEqual(group.wait(timeout: .now() + 60), .success, "every task ends")
        XCTAssertEqual(errors.withLock { $0 }, [])
        let lines = loggedLines(marker, count: count, in: nginx)
        XCTAssertEqual(lines.count, count, nginx.accessLog)
        XCTAssertEqual(connections(lines).count, 1, "one TLS connection for the session's burst: \(lines)")
    }

    func testABurstToAnHTTP1OriginOverTLSDoesNotWaitForGood() throws {
        let nginx = try startNginx(http2: false)
        let count = 12
        let sent = burst(count, to: nginx, policies: [privateCAPolicy()])
        XCTAssertEqual(sent[0].errors, [])
        let lines = loggedLines(sent[0].marker, count: count, in: nginx)
        XCTAssertEqual(lines.count, count, nginx.accessLog)
        // The waiting requests learn from the first connection's ALPN answer
        // that it will not multiplex, and go on (on connections of their own
        // or on one that became idle): none waits for good.
        XCTAssertTrue(lines.allSatisfy { $0.contains("HTTP/1.1\"") }, "\(lines)")
        XCTAssertLessThanOrEqual(connections(lines).count, count)
    }
}
