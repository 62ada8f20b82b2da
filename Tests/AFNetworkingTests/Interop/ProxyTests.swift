@testable import AFNetworking
@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// Proxies as a feature (issue 15, item 2), against real proxies started for
/// each test: tinyproxy (HTTP, CONNECT, Basic authentication) and danted
/// (SOCKS5), with `connectionProxyDictionary` on operations, the operation
/// manager and session configurations. The origins are the in-process server
/// (http) and nginx with the test PKI (https, HTTP/2 through the tunnel).
final class ProxyTests: SessionTasksTestCase {
    private var stoppers: [() -> Void] = []

    override func tearDown() {
        super.tearDown()
        for stop in stoppers { stop() }
        stoppers = []
    }

    /// With `credentials`, the proxy accepts each of these users and nobody else.
    private func tinyproxy(credentials: (user: String, password: String)...) throws -> TinyproxyFixture {
        let proxy = try TinyproxyFixture(credentials: credentials)
        stoppers.append(proxy.stop)
        return proxy
    }

    private func dante() throws -> DanteFixture {
        let proxy = try DanteFixture()
        stoppers.append(proxy.stop)
        return proxy
    }

    /// The PKI nginx's https URL for `path`, and a policy trusting its root.
    private func httpsOrigin(_ path: String) throws -> (URL, SecurityPolicy) {
        let nginx = try SharedServers.pkiNginx()
        let policy = SecurityPolicy.default()
        policy.additionalTrustedCertificates = [TestPKI.root]
        return (URL(string: "https://localhost:\(nginx.httpsPort)\(path)")!, policy)
    }

    private func operation(_ url: URL, proxies: [AnyHashable: Any]?, policy: SecurityPolicy? = nil) -> HTTPRequestOperation {
        var request = URLRequest(url: url)
        request.timeoutInterval = 15
        let operation = HTTPRequestOperation(request: request)
        operation.connectionProxyDictionary = proxies
        if let policy { operation.securityPolicy = policy }
        return operation
    }

    // MARK: - HTTP proxy

    func testAnHTTPRequestGoesThroughTheDictionarysHTTPProxy() throws {
        let proxy = try tinyproxy()
        server.respond("/via-proxy", body: Data("origin".utf8))
        let marker = "via-proxy?m=\(UUID().uuidString)"
        let operation = operation(URL(string: "\(server.baseURL.absoluteString)/\(marker)")!, proxies: proxy.dictionary)
        let outcome = run(operation)
        XCTAssertNil(outcome.error)
        XCTAssertEqual(operation.responseData, Data("origin".utf8))
        XCTAssertTrue(proxy.logShows(marker), "the proxy carried the request")
        XCTAssertEqual(operation.connectionProxyDictionary?["HTTPPort"] as? Int, proxy.port, "the getter returns what was set")
    }

    func testAnEmptyDictionaryGoesDirect() throws {
        let proxy = try tinyproxy()
        server.respond("/direct", body: Data("origin".utf8))
        let marker = "direct?m=\(UUID().uuidString)"
        let operation = operation(URL(string: "\(server.baseURL.absoluteString)/\(marker)")!, proxies: [:])
        XCTAssertNil(run(operation).error)
        XCTAssertEqual(server.requests.count, 1)
        XCTAssertFalse(proxy.logShows(marker, timeout: 0.3))
    }

    func testAnInvalidDictionaryFailsWithAClearErrorAndSendsNothing() throws {
        server.respond("/never", body: Data())
        for bad: [AnyHashable: Any] in [["HTTPEnable": true, "HTTPPort": 3128],
                                         ["HTTPEnable": true, "HTTPProxy": "127.0.0.1", "HTTPPort": 70_000],
                                         ["SOCKSEnable": 1, "SOCKSProxy": "127.0.0.1", "SOCKSPort": "many"]] {
            let outcome = run(operation(url("/never"), proxies: bad))
            XCTAssertEqual(outcome.error?.domain, NSURLErrorDomain)
            XCTAssertEqual(outcome.error?.code, NSURLErrorBadURL, "\(bad)")
            XCTAssertTrue(outcome.error?.localizedDescription.contains("connectionProxyDictionary") ?? false)
        }
        XCTAssertTrue(server.requests.isEmpty)
    }

    func testTheOperationManagerCopiesItsDictionaryToEveryOperation() throws {
        let proxy = try tinyproxy()
        server.respond("/managed", headers: [("Content-Type", "application/json")], body: Data("{}".utf8))
        let manager = HTTPRequestOperationManager(baseURL: server.baseURL)
        XCTAssertNil(manager.connectionProxyDictionary)
        manager.connectionProxyDictionary = proxy.dictionary
        let marker = "managed?m=\(UUID().uuidString)"
        let done = expectation(description: "GET")
        let operation = manager.get(marker, parameters: nil, success: { _, _ in done.fulfill() },
                                    failure: { _, error in XCTFail("\(error)"); done.fulfill() })
        wait(for: [done], timeout: 15)
        XCTAssertEqual(operation?.connectionProxyDictionary?["HTTPPort"] as? Int, proxy.port)
        XCTAssertTrue(proxy.logShows("m="), "the manager's operation went through the proxy")
    }

    // MARK: - CONNECT

    func testTheProxysConnectAnswerNeverSurfacesAsTheOrigins() throws {
        let proxy = try tinyproxy()
        let (url, policy) = try httpsOrigin("/teapot")
        let operation = operation(url, proxies: proxy.dictionary, policy: policy)
        let outcome = run(operation)
        XCTAssertNil(outcome.error.flatMap { $0.domain == NSURLErrorDomain ? $0 : nil })
        XCTAssertEqual(operation.response?.statusCode, 418, "the origin's answer, not the proxy's 200")
        XCTAssertNil(operation.response?.value(forHTTPHeaderField: "Proxy-Agent"))
        XCTAssertEqual(operation.responseString, "short and stout")
        XCTAssertTrue(proxy.logShows("CONNECT"), "the request went through the tunnel")
    }

    func testASessionTasksDidReceiveResponseSeesTheOriginThroughATunnel() throws {
        let proxy = try tinyproxy()
        let (url, policy) = try httpsOrigin("/teapot")
        let configuration = URLSessionConfiguration.default
        configuration.connectionProxyDictionary = proxy.dictionary
        let manager = makeManager(configuration: configuration)
        manager.securityPolicy = policy
        manager.responseSerializer = HTTPResponseSerializer()
        let statuses = Locked<[Int]>([])
        let agents = Locked<[String]>([])
        manager.setDataTaskDidReceiveResponseBlock { _, _, response in
            let http = response as? HTTPURLResponse
            statuses.append(http?.statusCode ?? -1)
            if let agent = http?.value(forHTTPHeaderField: "Proxy-Agent") { agents.append(agent) }
            return .allow
        }
        let probe = makeProbe()
        var request = URLRequest(url: url)
        request.timeoutInterval = 15
        let task = manager.dataTask(with: request, uploadProgress: nil, downloadProgress: nil, completionHandler: probe.data)
        let outcome = run(task, probe)
        XCTAssertEqual(statuses.value, [418])
        XCTAssertEqual(agents.value, [])
        XCTAssertEqual((outcome.response as? HTTPURLResponse)?.statusCode, 418)
        XCTAssertTrue(proxy.logShows("CONNECT"))
    }

    func testAPausedAndResumedDownloadThroughATunnelIsByteExact() throws {
        let proxy = try tinyproxy()
        let (url, policy) = try httpsOrigin("/slow/4m.bin")
        let expected = try Data(contentsOf: SharedServers.pkiNginx().directory.appendingPathComponent("www/4m.bin"))
        let file = temporaryFileURL("proxy-resume")
        let operation = operation(url, proxies: proxy.dictionary, policy: policy)
        operation.outputStream = OutputStream(toFileAtPath: file.path, append: false)
        let paused = Locked(false)
        operation.setDownloadProgressBlock { [weak operation] _, total, _ in
            if total >= 128 * 1024 && paused.setOnce() { operation?.pause() }
        }
        let outcome = Locked(Outcome())
        record(operation, into: outcome)
        operation.start()
        XCTAssertTrue(spin(until: { operation.isPaused }, timeout: 15))
        operation.resume()
        XCTAssertTrue(spin(until: { outcome.value.calls > 0 && operation.isFinished }, timeout: 30))
        XCTAssertNil(outcome.value.error)
        XCTAssertEqual(operation.response?.statusCode, 206, "the resumed hop's answer")
        let written = try Data(contentsOf: file)
        XCTAssertEqual(written.count, expected.count)
        XCTAssertTrue(written == expected, "byte-exact after the resume through the tunnel")
        XCTAssertTrue(proxy.logShows("CONNECT"))
    }

    // MARK: - 407

    func testAConnect407GoesThroughTheChallengeBlockWithTheProxysSpace() throws {
        let proxy = try tinyproxy(credentials: ("alice", "s3cret"))
        let (url, policy) = try httpsOrigin("/teapot")
        let operation = operation(url, proxies: proxy.dictionary, policy: policy)
        let spaces = Locked<[(host: String, port: Int, isProxy: Bool, type: String?, realm: String?)]>([])
        operation.setWillSendRequestForAuthenticationChallengeBlock { _, challenge in
            let space = challenge.protectionSpace
            spaces.append((space.host, space.port, space.isProxy(), space.proxyType, space.realm))
            XCTAssertEqual((challenge.failureResponse as? HTTPURLResponse)?.statusCode, 407)
            challenge.sender?.use(URLCredential(user: "alice", password: "s3cret", persistence: .none), for: challenge)
        }
        let outcome = run(operation)
        XCTAssertNil(outcome.error.flatMap { $0.domain == NSURLErrorDomain ? $0 : nil }, "\(String(describing: outcome.error))")
        XCTAssertEqual(operation.response?.statusCode, 418, "the origin's answer after authenticating to the proxy")
        XCTAssertEqual(spaces.value.count, 1)
        XCTAssertEqual(spaces.value.first?.host, "127.0.0.1", "the proxy's host, not the origin's")
        XCTAssertEqual(spaces.value.first?.port, proxy.port)
        XCTAssertEqual(spaces.value.first?.isProxy, true)
        XCTAssertEqual(spaces.value.first?.type, NSURLProtectionSpaceHTTPSProxy)
        XCTAssertEqual(spaces.value.first?.realm, "Tinyproxy")
    }

    func testAConnect407WithoutCredentialsFailsWithoutAResponse() throws {
        let proxy = try tinyproxy(credentials: ("alice", "s3cret"))
        let (url, policy) = try httpsOrigin("/teapot")
        let operation = operation(url, proxies: proxy.dictionary, policy: policy)
        let outcome = run(operation)
        XCTAssertEqual((outcome.error as NSError?)?.code, NSURLErrorUserAuthenticationRequired, "\(String(describing: outcome.error))")
        XCTAssertNil(operation.response, "the proxy's answer to CONNECT is never the response")
    }

    func testAConnect407WhoseChallengeIsCancelledEndsCancelledWithoutTheProxysHead() throws {
        let proxy = try tinyproxy(credentials: ("alice", "s3cret"))
        let (url, policy) = try httpsOrigin("/teapot")
        let operation = operation(url, proxies: proxy.dictionary, policy: policy)
        let seenDuringChallenge = Locked<[Int?]>([])
        operation.setWillSendRequestForAuthenticationChallengeBlock { operation, challenge in
            // While the challenge is open, the origin has not answered either.
            seenDuringChallenge.append((operation.response as? HTTPURLResponse)?.statusCode)
            challenge.sender?.cancel(challenge)
        }
        let outcome = run(operation)
        XCTAssertEqual((outcome.error as NSError?)?.code, NSURLErrorCancelled, "\(String(describing: outcome.error))")
        XCTAssertNil(operation.response, "the proxy's 407 is never presented as the origin's response")
        XCTAssertEqual(seenDuringChallenge.value, [nil])
    }

    func testAPlainHTTPProxys407NamesTheProxyAndItsCredentialsNeverReachTheOrigin() throws {
        let proxy = try tinyproxy(credentials: ("alice", "s3cret"))
        server.respond("/behind-proxy", body: Data("origin".utf8))
        let operation = operation(url("/behind-proxy"), proxies: proxy.dictionary)
        let spaces = Locked<[(host: String, port: Int, isProxy: Bool, type: String?)]>([])
        operation.setWillSendRequestForAuthenticationChallengeBlock { _, challenge in
            let space = challenge.protectionSpace
            spaces.append((space.host, space.port, space.isProxy(), space.proxyType))
            challenge.sender?.use(URLCredential(user: "alice", password: "s3cret", persistence: .none), for: challenge)
        }
        let outcome = run(operation)
        XCTAssertNil(outcome.error)
        XCTAssertEqual(operation.responseData, Data("origin".utf8))
        XCTAssertEqual(spaces.value.map(\.host), ["127.0.0.1"])
        XCTAssertEqual(spaces.value.first?.port, proxy.port, "the proxy's port, not the origin's \(server.port)")
        XCTAssertEqual(spaces.value.first?.isProxy, true)
        XCTAssertEqual(spaces.value.first?.type, NSURLProtectionSpaceHTTPProxy)
        XCTAssertEqual(server.requests.count, 1)
        for request in server.requests {
            XCTAssertNil(request.headers.first(name: "proxy-authorization"), "proxy credentials never reach the origin")
            XCTAssertNil(request.headers.first(name: "authorization"))
        }
    }

    /// A 407 that arrives through an established tunnel is the origin's
    /// (RFC 9110 §15.5.8): no proxy challenge comes of it, so the
    /// operation's credential is not sent anywhere (an origin a redirect
    /// led to could otherwise have it sent to the proxy at will), and the
    /// 407 is delivered as it is.
    func testAnOrigins407ThroughATunnelIsTheResponseNotAProxyChallenge() throws {
        let proxy = try tinyproxy()
        let nginx = try SharedServers.pkiNginx()
        let marker = "m=\(UUID().uuidString)"
        let (url, policy) = try httpsOrigin("/proxy-challenge?\(marker)")
        let operation = operation(url, proxies: proxy.dictionary, policy: policy)
        operation.credential = URLCredential(user: "user", password: "secret", persistence: .none)
        operation.shouldUseCredentialStorage = false
        let outcome = run(operation)
        XCTAssertEqual(operation.response?.statusCode, 407, "the origin's 407, delivered: \(String(describing: outcome.error))")
        XCTAssertEqual(operation.response?.value(forHTTPHeaderField: "Proxy-Authenticate"), "Basic realm=\"origin\"")
        XCTAssertEqual(operation.responseString, "not a proxy")
        XCTAssertTrue(proxy.logShows("CONNECT"), "the request went through the tunnel")
        XCTAssertTrue(nginx.logShows(marker))
        // A retry would follow the first request at once: give its log line time to appear.
        Thread.sleep(forTimeInterval: 0.5)
        let requests = nginx.accessLog.split(separator: "\n").filter { $0.contains(marker) }
        XCTAssertEqual(requests.count, 1, "the origin saw one request, none retried with proxy credentials: \(requests)")

        // Nor is a challenge block asked about it.
        let asked = Locked(0)
        let (again, _) = try httpsOrigin("/proxy-challenge?m=\(UUID().uuidString)")
        let withBlock = self.operation(again, proxies: proxy.dictionary, policy: policy)
        withBlock.setWillSendRequestForAuthenticationChallengeBlock { _, challenge in
            asked.increment()
            challenge.sender?.cancel(challenge)
        }
        run(withBlock)
        XCTAssertEqual(withBlock.response?.statusCode, 407)
        XCTAssertEqual(asked.value, 0, "no challenge comes of an origin's 407")
    }

    /// Through a proxy that forwards plain http a 407 may be the proxy's or
    /// one the origin sent through it: the operation's credential answers it
    /// on a request to the original origin, never on a hop a redirect took
    /// elsewhere (a challenge block still may).
    func testAForwardingProxys407GetsTheCredentialOnTheWayToTheOriginalOriginOnly() throws {
        let proxy = try tinyproxy(credentials: ("alice", "s3cret"))
        let other = try ScriptedServer()
        stoppers.append(other.shutdown)
        other.respond("/elsewhere", body: Data("elsewhere".utf8))
        server.respond("/start", status: 302, headers: [("Location", "http://127.0.0.1:\(other.port)/elsewhere")])
        let operation = operation(url("/start"), proxies: proxy.dictionary)
        operation.credential = URLCredential(user: "alice", password: "s3cret", persistence: .none)
        operation.shouldUseCredentialStorage = false
        _ = run(operation)
        XCTAssertEqual(server.requests.map(\.uri), ["/start"], "the credential answered the proxy on the way to the original origin")
        XCTAssertEqual(operation.response?.statusCode, 407, "the hop to another origin was not answered with the credential")
        XCTAssertTrue(other.requests.isEmpty, "the proxy never forwarded the unanswered hop")
    }

    /// The transport alone: a head names the proxy (so that a 407 can be its
    /// challenge) only when the proxy may have sent it — its refusal of
    /// CONNECT, and any head through a proxy that forwards plain http —
    /// never a head from inside a tunnel.
    func testOnlyHeadsAProxyMayHaveSentNameIt() throws {
        let proxy = try tinyproxy()
        let endpoint = ProxyEndpoint(kind: .http, host: "127.0.0.1", port: proxy.port)
        func transferOptions(_ url: URL, through endpoint: ProxyEndpoint) -> TransferOptions {
            var request = URLRequest(url: url)
            request.timeoutInterval = 15
            var options = TransferOptions(request: request)
            options.proxies = ProxyConfiguration(http: endpoint, https: endpoint)
            // No security policy at this level: the test PKI's root is not in the system store.
            options.tls.verifiesPeer = false
            options.tls.verifiesHost = false
            return options
        }

        let (origin, _) = try httpsOrigin("/proxy-challenge")
        let tunnelled = try runTransfer(transferOptions(origin, through: endpoint))
        XCTAssertEqual(tunnelled.heads.value.map(\.status), [407])
        XCTAssertEqual(tunnelled.heads.value.map { $0.proxy == nil }, [true], "a head through the tunnel is the origin's")
        XCTAssertEqual(tunnelled.completion.value?.status, 407)
        XCTAssertNil(tunnelled.completion.value?.proxy)
        XCTAssertEqual(tunnelled.completion.value?.isTunnelRefusal, false)

        server.respond("/forwarded", status: 407, headers: [("Proxy-Authenticate", "Basic realm=\"forwarded\"")])
        let forwarded = try runTransfer(transferOptions(url("/forwarded"), through: endpoint))
        XCTAssertEqual(forwarded.completion.value?.status, 407)
        XCTAssertEqual(forwarded.completion.value?.proxy, endpoint, "through a forwarding proxy a 407 may be the proxy's")

        let guarded = try tinyproxy(credentials: ("alice", "s3cret"))
        let guardedEndpoint = ProxyEndpoint(kind: .http, host: "127.0.0.1", port: guarded.port)
        let refused = try runTransfer(transferOptions(origin, through: guardedEndpoint))
        XCTAssertEqual(refused.heads.value.count, 0, "the proxy's answer to CONNECT is never reported as a head")
        XCTAssertEqual(refused.completion.value?.status, 407)
        XCTAssertEqual(refused.completion.value?.proxy, guardedEndpoint, "the proxy's refusal of CONNECT is its challenge")
        XCTAssertEqual(refused.completion.value?.isTunnelRefusal, true)
    }

    /// Runs one transfer with the engine alone and waits (bounded) for its end.
    private func runTransfer(_ options: TransferOptions) throws -> ProxyNamingDelegate {
        let delegate = ProxyNamingDelegate()
        let transfer = try Transfer(options: options, delegate: delegate)
        NetworkEngine.shared.start(transfer)
        XCTAssertTrue(spin(until: { delegate.completion.value != nil }, timeout: 15), "the transfer ended")
        return delegate
    }

    /// A `Proxy-Authorization` the caller set goes to the proxy alone: in its
    /// CONNECT (not inside the tunnel to the origin), to a proxy that does
    /// not tunnel, and nowhere without a proxy.
    func testACallersProxyAuthorizationGoesToTheProxyAlone() throws {
        let credentials = "Basic " + Data("alice:s3cret".utf8).base64EncodedString()
        // Through a tunnel: no challenge block, so only the header can open it.
        let proxy = try tinyproxy(credentials: ("alice", "s3cret"))
        let (origin, policy) = try httpsOrigin("/teapot")
        var request = URLRequest(url: origin)
        request.timeoutInterval = 15
        request.setValue(credentials, forHTTPHeaderField: "Proxy-Authorization")
        let viaTunnel = HTTPRequestOperation(request: request)
        viaTunnel.connectionProxyDictionary = proxy.dictionary
        viaTunnel.securityPolicy = policy
        viaTunnel.responseSerializer.acceptableStatusCodes = nil
        XCTAssertNil(run(viaTunnel).error)
        XCTAssertEqual(viaTunnel.response?.statusCode, 418, "the CONNECT carried the credentials")

        // Through a proxy that does not tunnel.
        server.respond("/plain-proxied", body: Data("origin".utf8))
        var plain = URLRequest(url: url("/plain-proxied"))
        plain.setValue(credentials, forHTTPHeaderField: "Proxy-Authorization")
        let viaProxy = HTTPRequestOperation(request: plain)
        viaProxy.connectionProxyDictionary = proxy.dictionary
        XCTAssertNil(run(viaProxy).error)
        XCTAssertEqual(viaProxy.responseData, Data("origin".utf8))

        // Without a proxy: not sent.
        server.respond("/direct", body: Data("direct".utf8))
        var direct = URLRequest(url: url("/direct"))
        direct.setValue(credentials, forHTTPHeaderField: "Proxy-Authorization")
        XCTAssertNil(run(HTTPRequestOperation(request: direct)).error)
        for request in server.requests {
            XCTAssertNil(request.headers.first(name: "proxy-authorization"), "\(request.uri): proxy credentials never reach an origin")
        }
    }

    // MARK: - One proxy identity per connection

    /// A tunnel the proxy opened for one user never carries another user's
    /// request, nor one without proxy credentials (curl would reuse it: it
    /// matches a proxy connection by the proxy alone, and never compares a
    /// Proxy-Authorization field), so the proxy never counts one user's
    /// requests as another's.
    func testATunnelOpenedForOneProxyUserNeverCarriesAnothersRequest() throws {
        let proxy = try tinyproxy(credentials: ("alice", "s3cret"), ("bob", "hunter2"))
        let nginx = try SharedServers.pkiNginx()
        let tag = "identity-\(UUID().uuidString)"
        func get(_ name: String, proxyAuthorization user: (name: String, password: String)?,
                 configure: (HTTPRequestOperation) -> Void = { _ in }) throws -> (operation: HTTPRequestOperation, error: NSError?) {
            let (url, policy) = try httpsOrigin("/teapot?\(tag)=\(name)")
            var request = URLRequest(url: url)
            request.timeoutInterval = 15
            if let user {
                let basic = "Basic " + Data("\(user.name):\(user.password)".utf8).base64EncodedString()
                request.setValue(basic, forHTTPHeaderField: "Proxy-Authorization")
            }
            let operation = HTTPRequestOperation(request: request)
            operation.connectionProxyDictionary = proxy.dictionary
            operation.securityPolicy = policy
            operation.responseSerializer.acceptableStatusCodes = nil
            configure(operation)
            return (operation, run(operation).error)
        }
        /// The serial number of the connection nginx served `name`'s request on (`conn=N`).
        func connection(_ name: String) -> Substring? {
            let marker = "\(tag)=\(name) HTTP"
            guard nginx.logShows(marker), let line = nginx.accessLog.split(separator: "\n").first(where: { $0.contains(marker) }),
                  let serial = line.range(of: "conn=") else { return nil }
            return line[serial.upperBound...]
        }

        let alice = try get("alice", proxyAuthorization: ("alice", "s3cret"))
        XCTAssertEqual(alice.operation.response?.statusCode, 418, "\(String(describing: alice.error))")
        let bob = try get("bob", proxyAuthorization: ("bob", "hunter2"))
        XCTAssertEqual(bob.operation.response?.statusCode, 418, "\(String(describing: bob.error))")
        XCTAssertNotNil(connection("alice"))
        XCTAssertNotNil(connection("bob"))
        XCTAssertNotEqual(connection("alice"), connection("bob"), "bob's request went over alice's tunnel")
        XCTAssertTrue(spin(until: { proxy.connectRequests.count >= 2 }, timeout: 3))
        XCTAssertEqual(proxy.connectRequests.count, 2, "bob's request opened a tunnel of its own: \(proxy.connectRequests)")

        // No proxy credentials: the proxy refuses the tunnel it is asked for,
        // where alice's or bob's would have carried the request.
        let nobody = try get("nobody", proxyAuthorization: nil)
        XCTAssertEqual(nobody.error?.code, NSURLErrorUserAuthenticationRequired, "\(String(describing: nobody.error))")
        XCTAssertNil(nobody.operation.response)
        XCTAssertFalse(nginx.accessLog.contains("\(tag)=nobody"), "a request without proxy credentials reached the origin")

        // Credentials answering the proxy's challenge have their own tunnel too.
        let answered = try get("answered", proxyAuthorization: nil) { operation in
            operation.setWillSendRequestForAuthenticationChallengeBlock { _, challenge in
                challenge.sender?.use(URLCredential(user: "bob", password: "hunter2", persistence: .none), for: challenge)
            }
        }
        XCTAssertEqual(answered.operation.response?.statusCode, 418, "\(String(describing: answered.error))")
        XCTAssertNotNil(connection("answered"))
        XCTAssertFalse([connection("alice"), connection("bob")].contains(connection("answered")),
                       "the challenge's answer was carried by a tunnel another request's credentials opened")
    }

    /// The connection partition, without a network: one key per proxy
    /// identity (the same identity shares it), derived from the credentials
    /// but never holding them, and none of its own for credentials that do
    /// not go to a proxy.
    func testTheConnectionPartitionNamesTheProxyIdentityByDigest() throws {
        func partition(header: String? = nil, credentials: TransferCredentials? = nil,
                       through proxy: ProxyEndpoint? = ProxyEndpoint(kind: .http, host: "127.0.0.1", port: 9),
                       url: String = "https://localhost:9/x") throws -> String? {
            var request = URLRequest(url: URL(string: url)!)
            request.setValue(header, forHTTPHeaderField: "Proxy-Authorization")
            var options = TransferOptions(request: request)
            options.proxies = ProxyConfiguration(http: proxy, https: proxy)
            options.credentials = credentials
            let transfer = try Transfer(options: options, delegate: RecordingDelegate())
            defer { transfer.releaseResources() }
            return transfer.connectionPartition
        }
        let alice = "Basic " + Data("alice:s3cret".utf8).base64EncodedString()
        let bob = "Basic " + Data("bob:hunter2".utf8).base64EncodedString()
        func answer(_ user: String, _ password: String, forProxy: Bool = true) -> TransferCredentials {
            TransferCredentials(user: user, password: password, scheme: .basic, forProxy: forProxy)
        }

        XCTAssertNil(try partition(), "no proxy credentials: the standard partition")
        let aliceKey = try XCTUnwrap(try partition(header: alice))
        XCTAssertEqual(try partition(header: alice), aliceKey, "one identity, one partition: its connections are reused")
        XCTAssertNotEqual(try partition(header: bob), aliceKey)
        XCTAssertEqual(try partition(header: alice, url: "http://localhost:9/x"), aliceKey, "plain http through the proxy too")
        XCTAssertNotNil(try partition(credentials: answer("alice", "s3cret")))
        XCTAssertEqual(try partition(credentials: answer("alice", "s3cret")), try partition(credentials: answer("alice", "s3cret")))
        XCTAssertNotEqual(try partition(credentials: answer("alice", "s3cret")), try partition(credentials: answer("alice", "other")))
        XCTAssertNotEqual(try partition(credentials: answer("alice", "s3cret")), try partition(credentials: answer("bob", "hunter2")))
        XCTAssertNotEqual(try partition(credentials: answer("ali", "ces3cret")), try partition(credentials: answer("alice", "s3cret")),
                          "the user and password do not run together")
        XCTAssertNotEqual(try partition(header: alice, credentials: answer("bob", "hunter2")), aliceKey)
        let inURL = ProxyEndpoint(kind: .http, host: "127.0.0.1", port: 9, userInfo: "carol:pw")
        XCTAssertNotNil(try partition(through: inURL), "credentials in the proxy URL count too")
        XCTAssertNotEqual(try partition(through: inURL), try partition(through: ProxyEndpoint(kind: .http, host: "127.0.0.1", port: 9,
                                                                                                 userInfo: "dave:pw")))

        XCTAssertNil(try partition(header: alice, through: nil), "without a proxy the field is not sent: nothing to keep apart")
        XCTAssertNil(try partition(credentials: answer("alice", "s3cret", forProxy: false)), "an origin's credentials are not the proxy's")
        let answerKey = try XCTUnwrap(try partition(credentials: answer("alice", "s3cret")))
        for key in [aliceKey, answerKey] {
            XCTAssertFalse(key.contains("s3cret") || key.contains("alice") || key.contains(Data("alice:s3cret".utf8).base64EncodedString()),
                           "the key holds no credential: \(key)")
        }
    }

    // MARK: - SOCKS5

    func testSOCKS5FromTheDictionaryCarriesHTTPAndHTTPS() throws {
        let socks = try dante()
        server.respond("/socks", body: Data("origin".utf8))
        let plain = operation(url("/socks"), proxies: socks.dictionary)
        XCTAssertNil(run(plain).error)
        XCTAssertEqual(plain.responseData, Data("origin".utf8))
        XCTAssertTrue(socks.logShows(".\(server.port)"), "danted logged the connect to the origin")

        let (url, policy) = try httpsOrigin("/teapot")
        let tls = operation(url, proxies: socks.dictionary, policy: policy)
        run(tls)
        XCTAssertEqual(tls.response?.statusCode, 418)
        XCTAssertTrue(socks.logShows(".\(url.port!)"))
    }

    func testASessionConfigurationsSOCKSProxyCarriesItsTasks() throws {
        let socks = try dante()
        server.respond("/socks-session", body: Data("origin".utf8))
        let configuration = URLSessionConfiguration.default
        configuration.connectionProxyDictionary = socks.dictionary
        let manager = makeManager(configuration: configuration)
        manager.responseSerializer = HTTPResponseSerializer()
        let probe = makeProbe()
        let task = manager.dataTask(with: request("/socks-session"), uploadProgress: nil, downloadProgress: nil, completionHandler: probe.data)
        let outcome = run(task, probe)
        XCTAssertNil(outcome.error)
        XCTAssertEqual(outcome.object as? Data, Data("origin".utf8))
        XCTAssertTrue(socks.logShows(".\(server.port)"))
    }

    // MARK: - The environment (curl's rules), through a spawned afn

    func testTheEnvironmentsProxyVariablesAreHonouredByAfn() throws {
        let proxy = try tinyproxy()
        server.respond("/env", body: Data("origin".utf8))
        let proxyURL = "http://127.0.0.1:\(proxy.port)"

        let viaLower = "env?case=lower-\(UUID().uuidString)"
        var run = try AFNTool.run(["get", "\(server.baseURL.absoluteString)/\(viaLower)"], environment: ["http_proxy": proxyURL])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(proxy.logShows(viaLower), "http_proxy is honoured")

        let viaUpper = "env?case=upper-\(UUID().uuidString)"
        run = try AFNTool.run(["get", "\(server.baseURL.absoluteString)/\(viaUpper)"], environment: ["HTTP_PROXY": proxyURL])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertFalse(proxy.logShows(viaUpper, timeout: 0.3), "HTTP_PROXY is ignored, as curl does (httpoxy)")

        let viaAll = "env?case=all-\(UUID().uuidString)"
        run = try AFNTool.run(["get", "\(server.baseURL.absoluteString)/\(viaAll)"], environment: ["ALL_PROXY": proxyURL])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(proxy.logShows(viaAll), "ALL_PROXY applies to http")

        let excluded = "env?case=no-proxy-\(UUID().uuidString)"
        run = try AFNTool.run(["get", "\(server.baseURL.absoluteString)/\(excluded)"],
                              environment: ["http_proxy": proxyURL, "NO_PROXY": "example.com, 127.0.0.0/8"])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertFalse(proxy.logShows(excluded, timeout: 0.3), "NO_PROXY's range excludes the origin")
    }

    /// An HTTPS proxy's certificate is verified as curl verifies it (the
    /// system's trust store, the proxy's name), never by the origin's
    /// security policy: a policy that forgives the origin's certificate
    /// (`-k`, `allowInvalidCertificates`, judged by the policy's evaluator
    /// because of `--cacert`) must not forgive the proxy's, which would hand
    /// the tunnel — and any proxy credentials — to whoever answers there.
    /// The proxy here (a TLS CONNECT proxy) presents a self-signed
    /// certificate; `curl --proxy-cacert` shows it works when trusted.
    func testAnHTTPSProxysCertificateIsNotJudgedByTheOriginsPolicy() throws {
        let (url, _) = try httpsOrigin("/1k.bin")
        let proxy = try TLSConnectProxy(identity: try SharedServers.nginx())
        defer { proxy.stop() }
        let rootCA = TestPKI.directory.appendingPathComponent("root-ca.cer").path
        let rootPEM = proxy.directory.appendingPathComponent("root-ca.pem").path
        XCTAssertEqual(try Fixtures.run("/usr/bin/openssl", ["x509", "-inform", "DER", "-in", rootCA, "-out", rootPEM]), 0)

        let control = try CurlCommandRunner.run("curl -sf --max-time 20 --proxy https://localhost:\(proxy.port) --proxy-cacert \(proxy.certificatePath) --cacert \(rootPEM) \(url.absoluteString)")
        XCTAssertEqual(control, 0, "the proxy tunnels when its certificate is trusted")
        XCTAssertTrue(proxy.logShows("CONNECT localhost:\(url.port!)"), proxy.log)

        let direct = try AFNTool.run(["get", "-k", "--cacert", rootCA, url.absoluteString])
        XCTAssertEqual(direct.status, 0, "the policy takes the origin: \(direct.stderr)")

        let before = proxy.log.components(separatedBy: "CONNECT").count
        let run = try AFNTool.run(["get", "-k", "--cacert", rootCA, url.absoluteString],
                                  environment: ["HTTPS_PROXY": "https://localhost:\(proxy.port)"])
        XCTAssertEqual(run.status, 60, "the proxy's self-signed certificate is refused: \(run.stderr)")
        XCTAssertEqual(proxy.log.components(separatedBy: "CONNECT").count, before, "no tunnel was asked for: \(proxy.log)")
    }

    func testTheEnvironmentsHTTPSProxyTunnelsForAfn() throws {
        let socks = try dante()
        let (url, _) = try httpsOrigin("/1k.bin")
        let run = try AFNTool.run(["get", "--cacert", TestPKI.directory.appendingPathComponent("root-ca.cer").path, url.absoluteString],
                                  environment: ["HTTPS_PROXY": "socks5h://127.0.0.1:\(socks.port)"])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(socks.logShows(".\(url.port!)"), "HTTPS_PROXY carried the https request")
    }

    // MARK: - curl's environment rules (the resolver itself)

    func testEnvironmentRules() {
        let http = URL(string: "http://api.example.com/x")!
        let https = URL(string: "https://api.example.com/x")!
        func endpoint(_ variables: [String: String], _ url: URL) -> ProxyEndpoint? {
            try? ProxyEnvironment(variables).endpoint(for: url).get()
        }
        XCTAssertEqual(endpoint(["http_proxy": "proxy:3128"], http)?.curlValue, "http://proxy:3128")
        XCTAssertNil(endpoint(["HTTP_PROXY": "proxy:3128"], http), "upper-case HTTP_PROXY is ignored")
        XCTAssertNil(endpoint(["http_proxy": "proxy:3128"], https), "http_proxy is for http only")
        XCTAssertEqual(endpoint(["HTTPS_PROXY": "proxy"], https)?.port, 1080, "curl's default proxy port")
        XCTAssertEqual(endpoint(["https_proxy": "https://secure-proxy"], https)?.port, 443)
        XCTAssertEqual(endpoint(["https_proxy": "a:1", "HTTPS_PROXY": "b:2"], https)?.host, "a", "lower case first")
        XCTAssertEqual(endpoint(["all_proxy": "socks5h://s:9050"], https)?.kind, .socks5h)
        XCTAssertEqual(endpoint(["ALL_PROXY": "socks5://s:9050"], http)?.kind, .socks5)
        XCTAssertEqual(endpoint(["http_proxy": "h:1", "all_proxy": "a:2"], http)?.host, "h", "the scheme's own variable first")
        XCTAssertEqual(endpoint(["http_proxy": "http://user:p%40ss@h:8080"], http)?.curlValue, "http://user:p%40ss@h:8080")
        XCTAssertEqual(endpoint(["http_proxy": "[::1]:3128"], http)?.host, "::1")
        for noProxy in ["*", "example.com", ".example.com", "api.example.com", "other.org, EXAMPLE.COM"] {
            XCTAssertNil(endpoint(["http_proxy": "h:1", "no_proxy": noProxy], http), noProxy)
        }
        for noProxy in ["ample.com", "other.org", "api.example.co"] {
            XCTAssertNotNil(endpoint(["http_proxy": "h:1", "NO_PROXY": noProxy], http), noProxy)
        }
        let loopback = URL(string: "http://127.0.0.1:8080/")!
        XCTAssertNil(endpoint(["http_proxy": "h:1", "no_proxy": "127.0.0.0/8"], loopback))
        XCTAssertNil(endpoint(["http_proxy": "h:1", "no_proxy": "127.0.0.1"], loopback))
        XCTAssertNotNil(endpoint(["http_proxy": "h:1", "no_proxy": "10.0.0.0/8"], loopback))
        XCTAssertNil(endpoint(["http_proxy": "h:1", "no_proxy": "::1"], URL(string: "http://[::1]:80/")!))
        XCTAssertThrowsError(try ProxyEnvironment(["http_proxy": "ftp://h:1"]).endpoint(for: http).get(), "an unknown proxy scheme is an error")
        XCTAssertNil(endpoint([:], http))
    }

    /// curl 7.88's `no_proxy` edges: `*` counts only as the whole value;
    /// trailing dots are ignored on both sides; an IPv4 host in a short or
    /// numeric form is the address curl connects to.
    func testNoProxyEdgesAsCurlReadsThem() {
        func proxied(_ noProxy: String, _ url: String) -> Bool {
            (try? ProxyEnvironment(["http_proxy": "h:1", "no_proxy": noProxy]).endpoint(for: URL(string: url)!).get()) != nil
        }
        XCTAssertFalse(proxied(" * ", "http://api.example.com/"), "* alone: no proxy for any host")
        XCTAssertTrue(proxied("localhost,*", "http://api.example.com/"), "* among other entries matches nothing")
        XCTAssertTrue(proxied("*.example.com", "http://api.example.com/"), "no wildcard patterns")
        XCTAssertFalse(proxied("example.com", "http://wiki.example.com./"), "a trailing dot on the host")
        XCTAssertFalse(proxied("example.com.", "http://wiki.example.com/"), "a trailing dot on the entry")
        XCTAssertTrue(proxied("example.com.", "http://notexample.com/"))
        for host in ["127.1", "2130706433", "0x7f.0.0.1", "017700000001"] {
            XCTAssertFalse(proxied("127.0.0.0/8", "http://\(host):8080/"), host)
            XCTAssertFalse(proxied("127.0.0.1", "http://\(host):8080/"), host)
        }
        XCTAssertTrue(proxied("127.0.0.0/8", "http://1e100.net/"), "a name that starts with a digit is a name")
        XCTAssertTrue(proxied("127.0.0.0/8", "http://1.2.3.4.5/"), "not an address")
    }

    /// A proxy variable that cannot be used fails the request naming it, but
    /// never with its user name and password (the message is logged and traced).
    func testAnUnusableProxyVariableIsReportedWithoutItsCredentials() {
        let url = URL(string: "http://api.example.com/x")!
        for value in ["http://alice:s3cret@proxy:99999", "ftp://alice:s3cret@proxy:21", "gopher://alice:s3cret@proxy",
                      "http://alice:s3cret#x/y?@proxy:8080"] {
            XCTAssertThrowsError(try ProxyEnvironment(["http_proxy": value]).endpoint(for: url).get(), value) { error in
                let text = (error as NSError).localizedDescription
                XCTAssertFalse(text.contains("s3cret") || text.contains("alice"), text)
                XCTAssertTrue(text.contains("***@proxy"), text)
            }
        }
        XCTAssertEqual(try? ProxyEnvironment(["http_proxy": "socks://proxy"]).endpoint(for: url).get()?.kind, .socks4,
                       "curl reads socks:// as SOCKS4")
        XCTAssertEqual(ProxyEnvironment.withoutUserInfo("proxy:3128"), "proxy:3128")
        XCTAssertEqual(ProxyEnvironment.withoutUserInfo("u:p@proxy/x@y"), "***@y", "the last @: more hidden, never less")
    }

    func testDictionaryRules() throws {
        let parsed = try ProxyDictionary.parse(["HTTPEnable": NSNumber(value: 1), "HTTPProxy": "p", "HTTPPort": NSNumber(value: 3128),
                                                "HTTPSEnable": false, "HTTPSProxy": "ignored", "SOCKSEnable": "1", "SOCKSProxy": "s"]).get()
        XCTAssertEqual(parsed.endpoint(forScheme: "http")?.curlValue, "http://p:3128")
        XCTAssertEqual(parsed.endpoint(forScheme: "https")?.curlValue, "socks5h://s:1080", "SOCKS covers what HTTPS does not")
        XCTAssertNil(try ProxyDictionary.parse([:]).get().endpoint(forScheme: "http"), "empty: direct")
        XCTAssertEqual(try ProxyDictionary.parse(["HTTPSEnable": true, "HTTPSProxy": "p"]).get().endpoint(forScheme: "https")?.port, 80)
    }
}

/// Records the status of each head a transfer reports and of its final
/// response, with the proxy each names (nil: the origin's).
private final class ProxyNamingDelegate: TransferDelegate {
    struct Completion {
        let status: Int?
        let proxy: ProxyEndpoint?
        let isTunnelRefusal: Bool
        let error: NSError?
    }

    let heads = Locked<[(status: Int, proxy: ProxyEndpoint?)]>([])
    let completion = Locked<Completion?>(nil)

    func transfer(_ transfer: Transfer, didReceiveHead response: ReceivedResponse) -> NSError? {
        heads.append((response.statusCode, response.proxy))
        return nil
    }

    func transfer(_ transfer: Transfer, didReceiveBodyBytes bytes: UnsafeRawBufferPointer) -> BodyDisposition { .accepted }

    func transfer(_ transfer: Transfer, didSendBodyBytes bytesSent: Int, totalBytesSent: Int64, totalBytesExpected: Int64) {}

    func transfer(_ transfer: Transfer, didCompleteWithResponse response: ReceivedResponse?, error: NSError?) {
        completion.value = Completion(status: response?.statusCode, proxy: response?.proxy,
                                      isTunnelRefusal: response?.isTunnelRefusal ?? false, error: error)
    }
}
