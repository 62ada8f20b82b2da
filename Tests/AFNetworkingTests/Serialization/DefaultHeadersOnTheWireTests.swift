import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// The default `Accept-Language` and `User-Agent` as README.md and the
/// Serialization article describe them, as a server receives them, and
/// `setValue(nil, …)` sending neither.
final class DefaultHeadersOnTheWireTests: OperationTestCase {
    private func received(with serializer: HTTPRequestSerializer) throws -> (language: String?, agent: String?) {
        let seen = Locked<(String?, String?)>((nil, nil))
        server.route("/headers") { request in
            seen.value = (request.headers.first(name: "Accept-Language"), request.headers.first(name: "User-Agent"))
            return [.head(status: 200, headers: [("Content-Length", "0")]), .end]
        }
        let request = try serializer.request(withMethod: "GET", urlString: url("/headers").absoluteString, parameters: nil)
        XCTAssertNil(run(HTTPRequestOperation(request: request)).error)
        return seen.value
    }

    func testTheDefaultsAsDocumented() throws {
        let headers = try received(with: HTTPRequestSerializer())
        let expectedLanguages = Locale.preferredLanguages.prefix(6).enumerated()
            .map { "\($0.element);q=\($0.offset == 0 ? "1" : "0.\(10 - $0.offset)")" }.joined(separator: ", ")
        XCTAssertEqual(headers.language, expectedLanguages)
        let agent = try XCTUnwrap(headers.agent)
        XCTAssertTrue(agent.hasSuffix("(Linux; \(ProcessInfo.processInfo.operatingSystemVersionString))"), agent)
    }

    func testNilSendsNeither() throws {
        let serializer = HTTPRequestSerializer()
        serializer.setValue(nil, forHTTPHeaderField: "User-Agent")
        serializer.setValue(nil, forHTTPHeaderField: "Accept-Language")
        let headers = try received(with: serializer)
        XCTAssertNil(headers.language)
        XCTAssertNil(headers.agent)
    }

    /// A default corelibs would drop (a line break in its value) fails the
    /// verb before anything is sent, rather than the request going out
    /// without the field; set right, it reaches the server.
    func testAnUnsendableDefaultFailsTheVerbAndNothingIsSent() async throws {
        let seen = Locked<[String?]>([])
        server.route("/auth") { request in
            seen.withLock { $0.append(request.headers.first(name: "Authorization")) }
            return [.head(status: 200, headers: [("Content-Length", "0")]), .end]
        }
        let manager = HTTPSessionManager(baseURL: server.baseURL)
        defer { manager.invalidateSessionCancelingTasks(true) }
        manager.requestSerializer.setValue("Bearer token\n", forHTTPHeaderField: "Authorization")
        do {
            _ = try await manager.get("auth")
            XCTFail("sent")
        } catch {
            XCTAssertEqual((error as NSError).domain, NSURLErrorDomain)
            XCTAssertEqual((error as NSError).code, NSURLErrorBadURL)
        }
        XCTAssertEqual(server.requests.count, 0, "nothing was sent")
        manager.requestSerializer.setValue("Bearer token", forHTTPHeaderField: "Authorization")
        _ = try await manager.get("auth")
        XCTAssertEqual(seen.value, ["Bearer token"])
    }
}
