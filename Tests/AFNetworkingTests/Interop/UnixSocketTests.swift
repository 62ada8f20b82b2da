@testable import AFNetworking
import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// Requests to a server on a Unix domain socket (issue 15): nginx listening
/// on a socket, reached through `http+unix://<percent-encoded path>/…` from
/// operations, both managers (also as `baseURL`) and session tasks.
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
}
