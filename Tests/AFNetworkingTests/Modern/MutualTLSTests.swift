import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// Client certificates (`ClientCertificate`, `clientCertificate` on the
/// operation and both managers): the factories' checks, nginx requiring a
/// certificate (it answers 400 without one), `openssl s_server` failing the
/// handshake itself (NSURLErrorClientCertificateRequired / …Rejected), and
/// connections that never carry a request for another identity.
final class MutualTLSTests: OperationTestCase {
    override class func tearDown() {
        MutualTLSFixture.stopShared()
        MutualTLSMaterial.removeShared()
        super.tearDown()
    }

    private func loadMaterial() throws -> MutualTLSMaterial { try MutualTLSMaterial.shared() }
    private func sharedFixture() throws -> MutualTLSFixture { try MutualTLSFixture.shared() }

    private func pemIdentity() throws -> ClientCertificate {
        let material = try loadMaterial()
        return try ClientCertificate.pem(certificateChainFile: material.clientCertificatePEM, privateKeyFile: material.clientKeyPEM)
    }

    private func pkcs12Identity() throws -> ClientCertificate {
        let material = try loadMaterial()
        return try ClientCertificate.pkcs12(contentsOf: material.clientPKCS12, passphrase: material.pkcs12Passphrase)
    }

    private func rogueIdentity() throws -> ClientCertificate {
        let material = try loadMaterial()
        return try ClientCertificate.pem(certificateChainFile: material.rogueCertificatePEM, privateKeyFile: material.rogueKeyPEM)
    }

    /// A GET of `url` with the servers' self-signed certificate accepted.
    private func makeOperation(_ url: URL, identity: ClientCertificate?) -> HTTPRequestOperation {
        var request = URLRequest(url: url)
        request.timeoutInterval = 10
        let operation = HTTPRequestOperation(request: request)
        operation.securityPolicy = ModernSupport.permissivePolicy()
        operation.clientCertificate = identity
        return operation
    }

    private func hello() throws -> URL { try sharedFixture().nginxURL.appendingPathComponent("hello.txt") }

    /// The factory must refuse, with NSURLErrorClientCertificateRejected and a description containing `reason`.
    private func assertRefused(_ reason: String, file: StaticString = #filePath, line: UInt = #line,
                               _ make: () throws -> ClientCertificate) {
        do {
            _ = try make()
            XCTFail("the factory accepted it", file: file, line: line)
        } catch {
            let nsError = error as NSError
            XCTAssertEqual(nsError.domain, NSURLErrorDomain, file: file, line: line)
            XCTAssertEqual(nsError.code, NSURLErrorClientCertificateRejected, file: file, line: line)
            XCTAssertTrue(nsError.localizedDescription.hasPrefix("The client certificate cannot be used:"), nsError.localizedDescription,
                          file: file, line: line)
            XCTAssertTrue(nsError.localizedDescription.contains(reason), "\(nsError.localizedDescription) lacks “\(reason)”",
                          file: file, line: line)
            XCTAssertEqual(error.afnetworking.kind, .clientCertificateRejected, file: file, line: line)
        }
    }

    // MARK: - The factories

    func testPEMFromFilesAndFromMemoryIsTheSameIdentity() throws {
        let material = try loadMaterial()
        let fromFiles = try pemIdentity()
        let fromMemory = try ClientCertificate.pem(certificateChain: Data(contentsOf: material.clientCertificatePEM),
                                                   privateKey: Data(contentsOf: material.clientKeyPEM))
        XCTAssertEqual(fromFiles, fromMemory)
        XCTAssertNotEqual(fromFiles, try rogueIdentity())
    }

    func testPKCS12WithItsPassphrase() throws {
        let material = try loadMaterial()
        let fromFile = try pkcs12Identity()
        let fromMemory = try ClientCertificate.pkcs12(Data(contentsOf: material.clientPKCS12), passphrase: material.pkcs12Passphrase)
        XCTAssertEqual(fromFile, fromMemory)
        XCTAssertNotEqual(fromFile, try pemIdentity(), "another format of the same key is another identity value")
    }

    func testGarbagePEMIsRefused() throws {
        let key = try Data(contentsOf: loadMaterial().clientKeyPEM)
        assertRefused("not a PEM certificate") {
            try ClientCertificate.pem(certificateChain: Data("this is not a certificate".utf8), privateKey: key)
        }
        assertRefused("not a PEM certificate") {
            try ClientCertificate.pem(certificateChain: Data(), privateKey: key)
        }
    }

    func testAChainWithADamagedSecondCertificateIsRefused() throws {
        let material = try loadMaterial()
        let leaf = try String(contentsOf: material.clientCertificatePEM, encoding: .utf8)
        let key = try Data(contentsOf: material.clientKeyPEM)
        let damaged = leaf + "-----BEGIN CERTIFICATE-----\nMIIBdamaged!!notbase64\n-----END CERTIFICATE-----\n"
        assertRefused("after the first one in the chain is damaged") {
            try ClientCertificate.pem(certificateChain: Data(damaged.utf8), privateKey: key)
        }
        // The leaf twice is a whole chain as far as parsing goes.
        XCTAssertNoThrow(try ClientCertificate.pem(certificateChain: Data((leaf + leaf).utf8), privateKey: key))
    }

    func testGarbageKeyIsRefused() throws {
        let certificate = try Data(contentsOf: loadMaterial().clientCertificatePEM)
        assertRefused("not a PEM private key") {
            try ClientCertificate.pem(certificateChain: certificate, privateKey: Data("-----BEGIN PRIVATE KEY-----\nnope\n".utf8))
        }
    }

    func testAKeyThatDoesNotBelongToTheCertificateIsRefused() throws {
        let material = try loadMaterial()
        assertRefused("does not belong to the certificate") {
            try ClientCertificate.pem(certificateChainFile: material.clientCertificatePEM, privateKeyFile: material.rogueKeyPEM)
        }
    }

    func testAWrongPKCS12PassphraseIsRefused() throws {
        let material = try loadMaterial()
        assertRefused("cannot be opened") {
            try ClientCertificate.pkcs12(contentsOf: material.clientPKCS12, passphrase: "not the passphrase")
        }
        assertRefused("cannot be opened") {
            try ClientCertificate.pkcs12(contentsOf: material.clientPKCS12)
        }
    }

    func testGarbagePKCS12IsRefused() {
        assertRefused("not a PKCS#12 bundle") {
            try ClientCertificate.pkcs12(Data("not DER at all".utf8), passphrase: "x")
        }
    }

    func testAMissingFileIsRefusedWithItsPath() throws {
        let material = try loadMaterial()
        let missing = URL(fileURLWithPath: "/nonexistent-\(UUID().uuidString)/client.pem")
        assertRefused(missing.path) {
            try ClientCertificate.pem(certificateChainFile: missing, privateKeyFile: material.clientKeyPEM)
        }
        assertRefused(missing.path) {
            try ClientCertificate.pem(certificateChainFile: material.clientCertificatePEM, privateKeyFile: missing)
        }
        assertRefused(missing.path) {
            try ClientCertificate.pkcs12(contentsOf: missing, passphrase: "x")
        }
        do {
            _ = try ClientCertificate.pkcs12(contentsOf: missing)
            XCTFail("missing")
        } catch {
            XCTAssertNotNil((error as NSError).userInfo[NSUnderlyingErrorKey], "the file system's error is kept underneath")
        }
    }

    // MARK: - nginx (ssl_verify_client on)

    func testAPEMIdentityIsPresentedByAnOperation() throws {
        let operation = try makeOperation(hello(), identity: pemIdentity())
        let outcome = run(operation)
        XCTAssertNil(outcome.error)
        XCTAssertEqual(operation.response?.statusCode, 200)
        XCTAssertEqual(operation.responseString, "hello, client\n")
    }

    func testAPKCS12IdentityIsPresentedByAnOperation() throws {
        let operation = try makeOperation(hello(), identity: pkcs12Identity())
        XCTAssertNil(run(operation).error)
        XCTAssertEqual(operation.responseString, "hello, client\n")
    }

    func testWithoutACertificateNginxAnswers400() throws {
        let operation = try makeOperation(hello(), identity: nil)
        let outcome = run(operation)
        XCTAssertEqual(operation.response?.statusCode, 400, "nginx's documented answer to a missing client certificate")
        XCTAssertEqual(outcome.error?.domain, AFURLResponseSerializationErrorDomain)
        XCTAssertEqual(outcome.error?.afnetworking.kind, .http(status: 400, body: operation.responseData))
        XCTAssertTrue(operation.responseString?.contains("No required SSL certificate was sent") ?? false,
                      operation.responseString ?? "no body")
    }

    func testAnUntrustedCertificateGets400FromNginx() throws {
        let operation = try makeOperation(hello(), identity: rogueIdentity())
        _ = run(operation)
        XCTAssertEqual(operation.response?.statusCode, 400)
        XCTAssertTrue(operation.responseString?.contains("SSL certificate error") ?? false, operation.responseString ?? "no body")
    }

    func testTheOperationManagerPresentsItsCertificate() async throws {
        let fixture = try sharedFixture()
        let identity = try pkcs12Identity()
        let manager = HTTPRequestOperationManager(baseURL: fixture.nginxURL)
        manager.securityPolicy = ModernSupport.permissivePolicy()
        manager.responseSerializer = HTTPResponseSerializer()
        manager.completionQueue = ModernSupport.completionQueue("mtls-ops")
        manager.clientCertificate = identity
        XCTAssertEqual(manager.httpRequestOperation(with: URLRequest(url: fixture.nginxURL), success: nil, failure: nil).clientCertificate,
                       identity, "copied onto each operation")
        try await modernBounded(30) {
            let (response, object) = try await manager.get("hello.txt")
            XCTAssertEqual(response.statusCode, 200)
            XCTAssertEqual(object as? Data, Data("hello, client\n".utf8))
        }
    }

    func testTheSessionManagerPresentsItsCertificate() async throws {
        let fixture = try sharedFixture()
        let manager = HTTPSessionManager(baseURL: fixture.nginxURL)
        defer { manager.invalidateSessionCancelingTasks(true) }
        manager.securityPolicy = ModernSupport.permissivePolicy()
        manager.responseSerializer = HTTPResponseSerializer()
        manager.completionQueue = ModernSupport.completionQueue("mtls-session")
        manager.clientCertificate = try pemIdentity()
        try await modernBounded(30) {
            let (response, object) = try await manager.get("hello.txt")
            XCTAssertEqual(response.statusCode, 200)
            XCTAssertEqual(object as? Data, Data("hello, client\n".utf8))
        }
    }

    func testASessionManagerWithoutACertificateGets400() async throws {
        let fixture = try sharedFixture()
        let manager = HTTPSessionManager(baseURL: fixture.nginxURL)
        defer { manager.invalidateSessionCancelingTasks(true) }
        manager.securityPolicy = ModernSupport.permissivePolicy()
        manager.responseSerializer = HTTPResponseSerializer()
        manager.completionQueue = ModernSupport.completionQueue("mtls-session-none")
        XCTAssertNil(manager.clientCertificate)
        try await modernBounded(30) {
            do {
                _ = try await manager.get("hello.txt")
                XCTFail("nginx must refuse a request without a certificate")
            } catch {
                XCTAssertEqual(error.afnetworking.kind.httpStatus, 400, "\(error)")
            }
        }
    }

    func testAConnectionOpenedWithAnIdentityIsNeverReusedWithoutIt() throws {
        let url = try hello()
        let identity = try pemIdentity()
        // With, then without, then with again: each answer is the one its own
        // handshake earns, whatever connections the earlier ones left open.
        let first = makeOperation(url, identity: identity)
        XCTAssertNil(run(first).error)
        XCTAssertEqual(first.response?.statusCode, 200)

        let second = makeOperation(url, identity: nil)
        _ = run(second)
        XCTAssertEqual(second.response?.statusCode, 400, "the request without a certificate rode the identified connection")

        let third = makeOperation(url, identity: identity)
        XCTAssertNil(run(third).error)
        XCTAssertEqual(third.response?.statusCode, 200, "the request with a certificate rode the anonymous connection")
    }

    /// A cached answer is private to the client identity that earned it:
    /// `fresh/hello.txt` is fresh for an hour, so a cache keyed only by URL and
    /// policy would answer the anonymous and the rogue request itself (with the
    /// trusted identity's 200) instead of letting nginx refuse them.
    func testACachedAnswerIsNeverServedToAnotherIdentity() throws {
        let url = try sharedFixture().nginxURL.appendingPathComponent("fresh/hello.txt")
        // Operations use URLCache.shared; the fixture's port makes the URL this test's own.
        func operation(_ identity: ClientCertificate?) -> HTTPRequestOperation {
            var request = URLRequest(url: url)
            request.timeoutInterval = 10
            let operation = HTTPRequestOperation(request: request)
            operation.securityPolicy = ModernSupport.permissivePolicy()
            operation.clientCertificate = identity
            return operation
        }
        let trusted = try pemIdentity()
        let first = operation(trusted)
        XCTAssertNil(run(first).error)
        XCTAssertEqual(first.response?.statusCode, 200)
        let again = operation(trusted)
        XCTAssertNil(run(again).error)
        XCTAssertEqual(again.responseString, "hello, client\n", "the same identity is served from the cache")

        let anonymous = operation(nil)
        _ = run(anonymous)
        XCTAssertEqual(anonymous.response?.statusCode, 400, "the anonymous request was answered with the identified one's cached answer")
        let rogue = operation(try rogueIdentity())
        _ = run(rogue)
        XCTAssertEqual(rogue.response?.statusCode, 400, "the rogue identity was answered with the trusted one's cached answer")
    }

    /// The session layer shares the rule: one configuration's cache, two managers.
    func testASessionManagerNeverServesAnotherIdentitysCachedAnswer() async throws {
        let fixture = try sharedFixture()
        let configuration = URLSessionConfiguration.default
        configuration.urlCache = URLCache(memoryCapacity: 1 << 20, diskCapacity: 0, diskPath: nil)
        func manager(_ identity: ClientCertificate?) -> HTTPSessionManager {
            let manager = HTTPSessionManager(baseURL: fixture.nginxURL, sessionConfiguration: configuration)
            manager.securityPolicy = ModernSupport.permissivePolicy()
            manager.responseSerializer = HTTPResponseSerializer()
            manager.completionQueue = ModernSupport.completionQueue("mtls-cache")
            manager.clientCertificate = identity
            return manager
        }
        let identified = manager(try pemIdentity())
        let anonymous = manager(nil)
        defer {
            identified.invalidateSessionCancelingTasks(true)
            anonymous.invalidateSessionCancelingTasks(true)
        }
        try await modernBounded(30) {
            let (response, _) = try await identified.get("fresh/hello.txt")
            XCTAssertEqual(response.statusCode, 200)
            do {
                _ = try await anonymous.get("fresh/hello.txt")
                XCTFail("the anonymous manager was answered with the identified one's cached answer")
            } catch {
                XCTAssertEqual(error.afnetworking.kind.httpStatus, 400, "\(error)")
            }
        }
    }

    /// Issue 15 item 6: the certificate is presented to the original request's origin only.
    func testTheCertificateIsNotPresentedToAnotherOriginAfterARedirect() throws {
        let fixture = try sharedFixture()
        let operation = makeOperation(fixture.nginxURL.appendingPathComponent("elsewhere"), identity: try pemIdentity())
        _ = run(operation)
        XCTAssertEqual(operation.response?.url?.host, "127.0.0.1", "the redirect was followed")
        XCTAssertEqual(operation.response?.statusCode, 400, "the certificate went to another origin")
        // At its own origin, the same identity is still presented.
        let direct = makeOperation(URL(string: "https://127.0.0.1:\(fixture.nginxPort)/hello.txt")!, identity: try pemIdentity())
        XCTAssertNil(run(direct).error)
        XCTAssertEqual(direct.response?.statusCode, 200)
    }

    func testAConnectionIsNeverReusedForAnotherIdentity() throws {
        let url = try hello()
        let good = try makeOperation(url, identity: pemIdentity())
        XCTAssertNil(run(good).error)
        let rogue = try makeOperation(url, identity: rogueIdentity())
        _ = run(rogue)
        XCTAssertEqual(rogue.response?.statusCode, 400, "the rogue identity rode the trusted identity's connection")
        let again = try makeOperation(url, identity: pkcs12Identity())
        XCTAssertNil(run(again).error)
        XCTAssertEqual(again.response?.statusCode, 200)
    }

    func testTheServersCertificateCanBeTrustedAsAnExtraAnchor() throws {
        let fixture = try sharedFixture()
        var request = URLRequest(url: try hello())
        request.timeoutInterval = 10
        let operation = HTTPRequestOperation(request: request)
        let policy = SecurityPolicy.default()
        policy.additionalTrustedCertificates = [fixture.material.serverCertificateDER]
        XCTAssertTrue(policy.validatesDomainName)
        operation.securityPolicy = policy
        operation.clientCertificate = try pemIdentity()
        XCTAssertNil(run(operation).error)
        XCTAssertEqual(operation.responseString, "hello, client\n")
    }

    // MARK: - openssl s_server (the handshake itself fails)

    func testSServerAcceptsTheTrustedCertificate() throws {
        let operation = try makeOperation(sharedFixture().sServerURL, identity: pemIdentity())
        let outcome = run(operation)
        XCTAssertNil(outcome.error)
        XCTAssertEqual(operation.response?.statusCode, 200)
        XCTAssertTrue(operation.responseString?.contains("s_server") ?? false)
    }

    func testWithoutACertificateTheHandshakeFailsWithClientCertificateRequired() throws {
        let operation = try makeOperation(sharedFixture().sServerURL, identity: nil)
        let outcome = run(operation)
        XCTAssertEqual(outcome.error?.domain, NSURLErrorDomain, "\(String(describing: outcome.error))")
        XCTAssertEqual(outcome.error?.code, NSURLErrorClientCertificateRequired, "\(String(describing: outcome.error))")
        XCTAssertEqual(outcome.error?.afnetworking.kind, .clientCertificateRequired)
        XCTAssertNil(operation.response)
        let underlying = outcome.error?.userInfo[NSUnderlyingErrorKey] as? NSError
        XCTAssertEqual(underlying?.domain, AFNetworkingCurlErrorDomain)
        XCTAssertTrue(underlying?.localizedDescription.lowercased().contains("certificate required") ?? false,
                      underlying?.localizedDescription ?? "no underlying error")
    }

    func testAnUntrustedCertificateFailsWithClientCertificateRejected() throws {
        let operation = try makeOperation(sharedFixture().sServerURL, identity: rogueIdentity())
        let outcome = run(operation)
        XCTAssertEqual(outcome.error?.domain, NSURLErrorDomain, "\(String(describing: outcome.error))")
        XCTAssertEqual(outcome.error?.code, NSURLErrorClientCertificateRejected, "\(String(describing: outcome.error))")
        XCTAssertEqual(outcome.error?.afnetworking.kind, .clientCertificateRejected)
        let underlying = outcome.error?.userInfo[NSUnderlyingErrorKey] as? NSError
        XCTAssertEqual(underlying?.domain, AFNetworkingCurlErrorDomain)
        XCTAssertTrue(underlying?.localizedDescription.lowercased().contains("unknown ca") ?? false,
                      underlying?.localizedDescription ?? "no underlying error")
    }

    func testTheSessionManagerReportsAMissingCertificateToo() async throws {
        let fixture = try sharedFixture()
        let manager = URLSessionManager(sessionConfiguration: nil)
        defer { manager.invalidateSessionCancelingTasks(true) }
        manager.securityPolicy = ModernSupport.permissivePolicy()
        manager.completionQueue = ModernSupport.completionQueue("mtls-sserver")
        var request = URLRequest(url: fixture.sServerURL)
        request.timeoutInterval = 10
        let sent = request
        try await modernBounded(30) {
            do {
                _ = try await manager.data(for: sent)
                XCTFail("s_server must refuse the handshake")
            } catch {
                XCTAssertEqual((error as NSError).code, NSURLErrorClientCertificateRequired, "\(error)")
            }
        }
    }

    // MARK: - Settings

    func testACopiedOperationKeepsItsIdentity() throws {
        let identity = try pemIdentity()
        let operation = HTTPRequestOperation(request: URLRequest(url: URL(string: "https://localhost/")!))
        XCTAssertNil(operation.clientCertificate)
        operation.clientCertificate = identity
        XCTAssertEqual((operation.copy() as? HTTPRequestOperation)?.clientCertificate, identity)
    }
}

private extension AFNetworkingError.Kind {
    /// The status of `.http`, else nil.
    var httpStatus: Int? {
        if case .http(let status, _) = self { return status }
        return nil
    }
}
