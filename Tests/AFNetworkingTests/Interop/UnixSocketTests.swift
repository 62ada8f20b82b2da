@testable import AFNetworking
@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// Requests to a server on a Unix domain socket (issue 15): nginx listening
/// on a socket, reached through `http+unix://<percent-encoded path>/…` from
/// operations, both managers (also as `baseURL`) and session tasks; and
/// `https+unix://` to nginx's TLS server on a socket, its certificate judged
/// by the security policy against the name `localhost`.
final class UnixSocketTests: SessionTasksTestCase {
    private func socketURL(_ pathAndQuery: String) throws -> URL {
        let nginx = try SharedServers.nginx()
        return try XCTUnwrap(UnixSocketURL.url(socketPath: nginx.socketPath, pathAndQuery: pathAndQuery))
    }

    /// Lines nginx logged for requests that came in on the socket.
    private func socketLogLines(containing text: String, timeout: TimeInterval = 3) throws -> [Substring] {
        let nginx = try SharedServers.nginx()
        _ = nginx.logShows(text, timeout: timeout)
        return nginx.accessLog.split(separator: "\n").filter { $0.hasPrefix("unix:") && $0.contains(text) }
    }

    func testAnOperationReachesNginxOnItsSocketWithHostLocalhost() throws {
        let url = try socketURL("/1k.bin?unix=\(UUID().uuidString)")
        XCTAssertEqual(url.scheme, "http+unix")
        XCTAssertTrue(url.absoluteString.contains("%2F"), url.absoluteString)
        var request = URLRequest(url: url)
        request.timeoutInterval = 10
        let operation = HTTPRequestOperation(request: request)
        let outcome = run(operation)
        XCTAssertNil(outcome.error)
        XCTAssertEqual(operation.responseData?.count, 1024)
        XCTAssertEqual(operation.response?.url, url, "the response names the URL asked for")
        XCTAssertEqual(try socketLogLines(containing: url.query!).count, 1, "the request came in on the socket")

        let host = HTTPRequestOperation(request: URLRequest(url: try socketURL("/host")))
        XCTAssertNil(run(host).error)
        XCTAssertEqual(host.responseString, "localhost")
    }

    func testTheOperationManagerWithASocketBaseURL() throws {
        let base = try socketURL("/")
        let manager = HTTPRequestOperationManager(baseURL: base)
        XCTAssertEqual(URL(string: "host", relativeTo: manager.baseURL)?.absoluteURL.host, try SharedServers.nginx().socketPath,
                       "resolving against the base keeps the encoded socket path")
        manager.responseSerializer = HTTPResponseSerializer()
        let body = Locked<Data?>(nil)
        let done = expectation(description: "GET")
        manager.get("host", parameters: nil, success: { _, object in body.value = object as? Data; done.fulfill() },
                    failure: { _, error in XCTFail("\(error)"); done.fulfill() })
        wait(for: [done], timeout: 15)
        XCTAssertEqual(body.value, Data("localhost".utf8))
    }

    func testTheSessionManagerWithASocketBaseURL() throws {
        let manager = makeHTTPManager(baseURL: try socketURL("/"))
        manager.responseSerializer = HTTPResponseSerializer()
        let call = verbCall()
        manager.get("host", parameters: nil, success: call.success, failure: call.failure)
        wait(for: [call.expectation], timeout: 15)
        let outcome = call.outcome.value
        XCTAssertNil(outcome.error)
        XCTAssertEqual(outcome.object as? Data, Data("localhost".utf8))
    }

    func testASessionDataTaskOnTheSocket() throws {
        let manager = makeManager()
        manager.responseSerializer = HTTPResponseSerializer()
        let probe = makeProbe()
        let task = manager.dataTask(with: URLRequest(url: try socketURL("/1k.bin")), uploadProgress: nil, downloadProgress: nil,
                                    completionHandler: probe.data)
        let outcome = run(task, probe)
        XCTAssertNil(outcome.error)
        XCTAssertEqual((outcome.object as? Data)?.count, 1024)
    }

    func testAPathThatIsNotASocketCannotConnect() throws {
        let file = temporaryFileURL("not-a-socket")
        try Data("x".utf8).write(to: file)
        for path in [file.path, "/nonexistent/afn-\(UUID().uuidString).sock"] {
            var request = URLRequest(url: try XCTUnwrap(UnixSocketURL.url(socketPath: path, pathAndQuery: "/x")))
            request.timeoutInterval = 10
            let outcome = run(HTTPRequestOperation(request: request))
            XCTAssertEqual(outcome.error?.domain, NSURLErrorDomain)
            XCTAssertEqual(outcome.error?.code, NSURLErrorCannotConnectToHost, "\(path): \(String(describing: outcome.error))")
        }
    }

    func testARelativeRedirectStaysOnTheSocket() throws {
        let marker = UUID().uuidString
        let url = try socketURL("/relative-redirect?hop=\(marker)")
        let operation = HTTPRequestOperation(request: URLRequest(url: url))
        let hops = Locked<[URL]>([])
        operation.setRedirectResponseBlock { _, request, _ in
            if let target = request.url { hops.append(target) }
            return request
        }
        let outcome = run(operation)
        XCTAssertNil(outcome.error)
        XCTAssertEqual(operation.responseData?.count, 1024)
        XCTAssertEqual(hops.value.map(\.scheme), ["http+unix"])
        XCTAssertEqual(hops.value.first?.host, try SharedServers.nginx().socketPath)
        XCTAssertEqual(operation.response?.url?.scheme, "http+unix")
    }

    func testAServerElsewhereCannotRedirectToASocket() throws {
        let socket = try socketURL("/1k.bin?smuggled=\(UUID().uuidString)")
        server.respond("/to-socket", status: 302, headers: [("Location", socket.absoluteString)])
        let outcome = run(HTTPRequestOperation(request: request("/to-socket")))
        XCTAssertEqual(outcome.error?.code, NSURLErrorUnsupportedURL)
        XCTAssertTrue(try socketLogLines(containing: socket.query!, timeout: 0.3).isEmpty, "nothing reached the socket")
    }

    func testRedirectRulesForSockets() {
        let a = URL(string: "http+unix://%2Ftmp%2Fa.sock/x")!
        XCTAssertTrue(RedirectRules.staysOnItsSocket(a, URL(string: "http+unix://%2Ftmp%2Fa.sock/y")!))
        XCTAssertFalse(RedirectRules.staysOnItsSocket(a, URL(string: "http+unix://%2Ftmp%2FA.sock/y")!))
        XCTAssertFalse(RedirectRules.staysOnItsSocket(URL(string: "http://h/")!, a))
        XCTAssertFalse(RedirectRules.sameOrigin(a, URL(string: "http+unix://%2Ftmp%2FA.sock/x")!))
        XCTAssertTrue(RedirectRules.sameOrigin(a, URL(string: "http+unix://%2Ftmp%2Fa.sock/z")!))
    }
    // MARK: - https+unix

    private func tlsSocketURL(_ nginx: NginxFixture, _ pathAndQuery: String) throws -> URL {
        try XCTUnwrap(UnixSocketURL.url(socketPath: nginx.tlsSocketPath, scheme: "https+unix", pathAndQuery: pathAndQuery))
    }

    /// The test PKI's root trusted on top of the system store; chain, dates
    /// and name are still checked.
    private func privateCAPolicy() -> SecurityPolicy {
        let policy = SecurityPolicy.default()
        policy.additionalTrustedCertificates = [TestPKI.root]
        return policy
    }

    /// A GET of 1k.bin on `nginx`'s TLS socket under `policy`, and whether nginx saw it.
    private func fetchOverTLS(_ nginx: NginxFixture, policy: SecurityPolicy?) throws -> (HTTPRequestOperation, Outcome, reached: Bool) {
        let marker = "tls-unix=\(UUID().uuidString)"
        var request = URLRequest(url: try tlsSocketURL(nginx, "/1k.bin?\(marker)"))
        request.timeoutInterval = 10
        let operation = HTTPRequestOperation(request: request)
        if let policy { operation.securityPolicy = policy }
        let outcome = run(operation)
        let reached = nginx.logShows(marker, timeout: outcome.error == nil ? 3 : 0.3)
        return (operation, outcome, reached)
    }

    private func assertRefused(_ result: (HTTPRequestOperation, Outcome, reached: Bool), _ kind: AFNetworkingError.Kind,
                               file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(result.1.error?.domain, NSURLErrorDomain, "\(String(describing: result.1.error))", file: file, line: line)
        XCTAssertEqual(result.1.error?.afnetworking.kind, kind, "\(String(describing: result.1.error))", file: file, line: line)
        XCTAssertNil(result.0.responseData.flatMap { $0.isEmpty ? nil : $0 }, file: file, line: line)
        XCTAssertFalse(result.reached, "a refused server must not receive the request", file: file, line: line)
    }

    func testAnHTTPSOperationOnTheSocketValidatesTheChainForTheNameLocalhost() throws {
        let nginx = try SharedServers.pkiNginx()
        let policy = privateCAPolicy()
        XCTAssertTrue(policy.validatesDomainName)
        let (operation, outcome, reached) = try fetchOverTLS(nginx, policy: policy)
        XCTAssertNil(outcome.error)
        XCTAssertEqual(operation.responseData?.count, 1024)
        XCTAssertTrue(reached)
        XCTAssertEqual(operation.response?.url?.scheme, "https+unix", "the response names the URL asked for")
        XCTAssertTrue(nginx.accessLog.split(separator: "\n").contains { $0.hasPrefix("unix:") && $0.contains("tls-unix=") },
                      "the request came in on the socket")

        var hostRequest = URLRequest(url: try tlsSocketURL(nginx, "/host"))
        hostRequest.timeoutInterval = 10
        let host = HTTPRequestOperation(request: hostRequest)
        host.securityPolicy = policy
        XCTAssertNil(run(host).error)
        XCTAssertEqual(host.responseString, "localhost")
    }

    /// The leaf pinned (its certificate, its key), with the chain still
    /// validated up to the private root.
    private func pinningPolicies() -> [SecurityPolicy] {
        [SSLPinningMode.certificate, .publicKey].map { mode in
            let policy = SecurityPolicy(pinningMode: mode, withPinnedCertificates: [TestPKI.leaf])
            policy.additionalTrustedCertificates = [TestPKI.root]
            return policy
        }
    }

    func testPinningOnTheSocket() throws {
        let nginx = try SharedServers.pkiNginx()
        for policy in pinningPolicies() {
            XCTAssertFalse(policy.allowInvalidCertificates)
            let (operation, outcome, reached) = try fetchOverTLS(nginx, policy: policy)
            XCTAssertNil(outcome.error, "\(policy.sslPinningMode)")
            XCTAssertEqual(operation.responseData?.count, 1024, "\(policy.sslPinningMode)")
            XCTAssertTrue(reached, "\(policy.sslPinningMode)")
        }
    }

    func testAWrongCertificateOnTheSocketIsRefused() throws {
        // The plain fixture's self-signed certificate names localhost, but
        // neither the trusted root nor a pin vouches for it.
        let other = try SharedServers.nginx()
        assertRefused(try fetchOverTLS(other, policy: privateCAPolicy()), .tlsRejected(.untrustedRoot))
        for policy in pinningPolicies() {
            assertRefused(try fetchOverTLS(other, policy: policy), .tlsRejected(.untrustedRoot))
        }
        // A valid chain whose key is not the pinned one.
        let otherKey = SecurityPolicy(pinningMode: .publicKey, withPinnedCertificates: [TestPKI.unrelatedLeaf])
        otherKey.additionalTrustedCertificates = [TestPKI.root]
        let nginx = try SharedServers.pkiNginx()
        assertRefused(try fetchOverTLS(nginx, policy: otherKey), .tlsRejected(.pinMismatch))
        // libcurl's own verification (the default policy) refuses the private root too.
        let outcome = try fetchOverTLS(nginx, policy: nil)
        XCTAssertEqual(outcome.1.error?.domain, NSURLErrorDomain)
        XCTAssertTrue([NSURLErrorServerCertificateHasUnknownRoot, NSURLErrorServerCertificateUntrusted].contains(outcome.1.error?.code ?? 0),
                      "\(String(describing: outcome.1.error))")
        XCTAssertFalse(outcome.reached)
    }

    func testACertificateForAnotherNameOnTheSocketIsRefusedUnlessNamesAreNotChecked() throws {
        // Issued by the trusted root's intermediate, for wrong.test only.
        let directory = TestPKI.directory
        let wrongName = try NginxFixture(chain: [directory.appendingPathComponent("leaf-wronghost.cer"),
                                                 directory.appendingPathComponent("intermediate-ca.cer")],
                                         key: directory.appendingPathComponent("keys/leaf-wronghost.key.pem"))
        defer { wrongName.stop() }
        assertRefused(try fetchOverTLS(wrongName, policy: privateCAPolicy()), .tlsRejected(.hostnameMismatch))
        let chainOnly = privateCAPolicy()
        chainOnly.validatesDomainName = false
        let (operation, outcome, reached) = try fetchOverTLS(wrongName, policy: chainOnly)
        XCTAssertNil(outcome.error)
        XCTAssertEqual(operation.responseData?.count, 1024)
        XCTAssertTrue(reached)
    }

    func testTheOperationManagerWithAnHTTPSSocketBaseURL() throws {
        let nginx = try SharedServers.pkiNginx()
        let manager = HTTPRequestOperationManager(baseURL: try tlsSocketURL(nginx, "/"))
        manager.securityPolicy = privateCAPolicy()
        manager.responseSerializer = HTTPResponseSerializer()
        let body = Locked<Data?>(nil)
        let done = expectation(description: "GET")
        manager.get("host", parameters: nil, success: { _, object in body.value = object as? Data; done.fulfill() },
                    failure: { _, error in XCTFail("\(error)"); done.fulfill() })
        wait(for: [done], timeout: 15)
        XCTAssertEqual(body.value, Data("localhost".utf8))
    }

    func testTheSessionManagerWithAnHTTPSSocketBaseURL() throws {
        let nginx = try SharedServers.pkiNginx()
        let manager = makeHTTPManager(baseURL: try tlsSocketURL(nginx, "/"))
        manager.securityPolicy = privateCAPolicy()
        manager.responseSerializer = HTTPResponseSerializer()
        let call = verbCall()
        manager.get("host", parameters: nil, success: call.success, failure: call.failure)
        wait(for: [call.expectation], timeout: 15)
        let outcome = call.outcome.value
        XCTAssertNil(outcome.error)
        XCTAssertEqual(outcome.object as? Data, Data("localhost".utf8))
    }

    func testASessionDataTaskOnTheHTTPSSocket() throws {
        let nginx = try SharedServers.pkiNginx()
        let manager = makeManager()
        manager.securityPolicy = privateCAPolicy()
        manager.responseSerializer = HTTPResponseSerializer()
        let probe = makeProbe()
        let task = manager.dataTask(with: URLRequest(url: try tlsSocketURL(nginx, "/1k.bin")), uploadProgress: nil, downloadProgress: nil,
                                    completionHandler: probe.data)
        let outcome = run(task, probe)
        XCTAssertNil(outcome.error)
        XCTAssertEqual((outcome.object as? Data)?.count, 1024)

        // The session's policy refuses a socket whose certificate it does not trust.
        let refused = makeProbe("refused")
        let other = try SharedServers.nginx()
        let wrong = manager.dataTask(with: URLRequest(url: try tlsSocketURL(other, "/1k.bin")), uploadProgress: nil, downloadProgress: nil,
                                     completionHandler: refused.data)
        let failure = run(wrong, refused)
        XCTAssertEqual(failure.error?.domain, NSURLErrorDomain)
        XCTAssertEqual(failure.error?.afnetworking.kind, .tlsRejected(.untrustedRoot), "\(String(describing: failure.error))")
    }

    /// curl has no http+unix scheme: the description names the socket with
    /// `--unix-socket` and curl, running it, reaches nginx on the socket.
    func testTheCURLDescriptionOfASocketURLIsACommandCurlRuns() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/curl") else { throw XCTSkip("needs /usr/bin/curl") }
        let marker = UUID().uuidString
        let operation = HTTPRequestOperation(request: URLRequest(url: try socketURL("/1k.bin?curl=\(marker)")))
        let description = operation.cURLDescription()
        XCTAssertTrue(description.contains("--unix-socket '\(try SharedServers.nginx().socketPath)'"), description)
        XCTAssertTrue(description.contains("'http://localhost/1k.bin?curl=\(marker)'"), description)
        XCTAssertEqual(try CurlCommandRunner.run(description), 0, description)
        XCTAssertEqual(try socketLogLines(containing: marker).count, 1, "curl's request came in on the socket")
    }
}
