import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// `parameters:encoder:` on both managers (Alamofire's parameter encoders):
/// the scripted server receives exactly the expected bytes.
final class EncodableParametersTests: OperationTestCase {
    struct Order: Encodable, Sendable {
        var id: Int
        var note: String
        var tags: [String] = []
        var paid = false
        var price: Double = 1.5
        var address: Address?
    }

    struct Address: Encodable, Sendable {
        var city: String
    }

    struct Lines: Encodable, Sendable {
        var lines: [Address]
    }

    struct Amount: Encodable, Sendable {
        var value: Double
    }

    override func setUpWithError() throws {
        try super.setUpWithError()
        let body = Data(#"{"ok":"yes"}"#.utf8)
        // A HEAD answer has the GET answer's head and no body.
        server.route("/e") { request in
            [.head(status: 200, headers: [("Content-Type", "application/json"), ("Content-Length", "\(body.count)")]),
             .body(request.method == "HEAD" ? Data() : body), .end]
        }
    }

    private func call(_ start: (@escaping @Sendable () -> Void, @escaping @Sendable (Error) -> Void) -> AnyObject?) -> (made: Bool, error: Error?) {
        let error = Locked<Error?>(nil)
        let done = expectation(description: "completion")
        let made = start({ done.fulfill() }, { failure in error.withLock { $0 = failure }; done.fulfill() }) != nil
        wait(for: [done], timeout: 15)
        return (made, error.value)
    }

    private let order = Order(id: 7, note: "a b&c", tags: ["x", "y"], paid: true, address: Address(city: "Zürich"))
    private let formFields = "address%5Bcity%5D=Z%C3%BCrich&id=7&note=a%20b%26c&paid=1&price=1.5&tags%5B%5D=x&tags%5B%5D=y"

    func testJSONBodiesOnTheOperationManager() throws {
        let manager = HTTPRequestOperationManager(baseURL: server.baseURL)
        XCTAssertNil(call { ok, fail in
            manager.post("e", parameters: order, encoder: JSONParameterEncoder.sortedKeys,
                         success: { _, _ in ok() }, failure: { _, error in fail(error) })
        }.error)
        XCTAssertNil(call { ok, fail in
            manager.put("e", parameters: ["k": 1], encoder: .json, headers: ["Content-Type": "application/vnd.x+json"],
                        success: { _, _ in ok() }, failure: { _, error in fail(error) })
        }.error)
        XCTAssertNil(call { ok, fail in
            manager.patch("e", parameters: Address(city: "B"), encoder: JSONParameterEncoder.prettyPrinted,
                          success: { _, _ in ok() }, failure: { _, error in fail(error) })
        }.error)
        let received = server.requests
        XCTAssertEqual(received.map(\.method), ["POST", "PUT", "PATCH"])
        XCTAssertEqual(String(decoding: received[0].body, as: UTF8.self),
                       #"{"address":{"city":"Zürich"},"id":7,"note":"a b&c","paid":true,"price":1.5,"tags":["x","y"]}"#)
        XCTAssertEqual(received[0].headers["Content-Type"], ["application/json"])
        XCTAssertEqual(String(decoding: received[1].body, as: UTF8.self), #"{"k":1}"#)
        XCTAssertEqual(received[1].headers["Content-Type"], ["application/vnd.x+json"])
        XCTAssertEqual(String(decoding: received[2].body, as: UTF8.self), "{\n  \"city\" : \"B\"\n}")
    }

    func testFormFieldsGoInTheQueryOrBodyByTheSerializersMethods() throws {
        let manager = HTTPSessionManager(baseURL: server.baseURL)
        defer { manager.invalidateSessionCancelingTasks(true) }
        manager.requestSerializer.httpMethodsEncodingParametersInURI = ["GET", "HEAD"]
        for verb in ["GET", "HEAD", "POST", "DELETE"] {
            XCTAssertNil(call { ok, fail in
                let success: @Sendable (URLSessionDataTask, Any?) -> Void = { _, _ in ok() }
                let failure: @Sendable (URLSessionDataTask?, Error) -> Void = { _, error in fail(error) }
                switch verb {
                case "GET": return manager.get("e", parameters: order, encoder: URLEncodedFormParameterEncoder.default, success: success, failure: failure)
                case "HEAD": return manager.head("e", parameters: order, encoder: .urlEncodedForm, success: { _ in ok() }, failure: failure)
                case "POST": return manager.post("e", parameters: order, encoder: .urlEncodedForm, success: success, failure: failure)
                default: return manager.delete("e", parameters: order, encoder: .urlEncodedForm, success: success, failure: failure)
                }
            }.error, verb)
        }
        let received = server.requests
        XCTAssertEqual(received.map(\.method), ["GET", "HEAD", "POST", "DELETE"])
        XCTAssertEqual(received[0].uri, "/e?" + formFields)
        XCTAssertEqual(received[1].uri, "/e?" + formFields)
        XCTAssertEqual(received[0].body, Data())
        for request in received[2...] {
            XCTAssertEqual(request.uri, "/e")
            XCTAssertEqual(String(decoding: request.body, as: UTF8.self), formFields)
            XCTAssertEqual(request.headers["Content-Type"], ["application/x-www-form-urlencoded; charset=utf-8"])
        }
    }

    func testAFixedDestinationAndTheAsyncVerbs() async throws {
        let operations = HTTPRequestOperationManager(baseURL: server.baseURL)
        let sessions = HTTPSessionManager(baseURL: server.baseURL)
        defer { sessions.invalidateSessionCancelingTasks(true) }
        _ = try await operations.post("e", parameters: Address(city: "q"), encoder: URLEncodedFormParameterEncoder(destination: .queryString))
        let decoded = try await sessions.delete("e?x=1", parameters: Address(city: "b"), encoder: URLEncodedFormParameterEncoder(destination: .httpBody),
                                                as: [String: String].self)
        XCTAssertEqual(decoded, ["ok": "yes"])
        let response = try await sessions.head("e", parameters: ["a": "1"], encoder: .urlEncodedForm, headers: ["X-H": "1"])
        XCTAssertEqual(response.statusCode, 200)
        _ = try await operations.delete("e", parameters: ["a": 2], encoder: .json, as: [String: String].self)
        let received = server.requests
        XCTAssertEqual(received.map(\.uri), ["/e?city=q", "/e?x=1", "/e?a=1", "/e"])
        XCTAssertEqual(received[0].body, Data())
        XCTAssertEqual(received[1].body, Data("city=b".utf8))
        XCTAssertEqual(received[2].headers["X-H"], ["1"])
        XCTAssertEqual(received[3].body, Data(#"{"a":2}"#.utf8))
    }

    /// A GET with a body (`.httpBody`) is sent as a GET with that body, not as a POST.
    func testAGetWithABodyStaysAGet() async throws {
        let operations = HTTPRequestOperationManager(baseURL: server.baseURL)
        let sessions = HTTPSessionManager(baseURL: server.baseURL)
        defer { sessions.invalidateSessionCancelingTasks(true) }
        let body = URLEncodedFormParameterEncoder(destination: .httpBody)
        _ = try await operations.get("e", parameters: Address(city: "g"), encoder: body)
        _ = try await sessions.get("e", parameters: ["k": "v"], encoder: .json)
        let received = server.requests
        XCTAssertEqual(received.map(\.method), ["GET", "GET"])
        XCTAssertEqual(received.map(\.body), [Data("city=g".utf8), Data(#"{"k":"v"}"#.utf8)])
    }

    func testWhatTheFormCannotRepresentIsRefusedAndNothingIsSent() async throws {
        let operations = HTTPRequestOperationManager(baseURL: server.baseURL)
        let sessions = HTTPSessionManager(baseURL: server.baseURL)
        defer { sessions.invalidateSessionCancelingTasks(true) }
        let lines = Lines(lines: [Address(city: "a"), Address(city: "b")])
        let failures: [(String, () async throws -> Void)] = [
            ("array of keyed values", { _ = try await operations.post("e", parameters: lines, encoder: .urlEncodedForm) }),
            ("array of arrays", { _ = try await sessions.get("e", parameters: ["m": [[1, 2], [3]]], encoder: .urlEncodedForm) }),
            ("not keyed", { _ = try await sessions.post("e", parameters: [1, 2], encoder: .urlEncodedForm) }),
            ("bracket in a key", { _ = try await operations.get("e", parameters: ["a[b]": 1], encoder: .urlEncodedForm) }),
            ("NaN in a form", { _ = try await operations.put("e", parameters: Amount(value: .nan), encoder: .urlEncodedForm) }),
            ("infinity in JSON", { _ = try await sessions.patch("e", parameters: Amount(value: .infinity), encoder: .json) }),
        ]
        for (name, attempt) in failures {
            do {
                try await attempt()
                XCTFail("\(name): sent")
            } catch {
                let nsError = error as NSError
                XCTAssertEqual(nsError.domain, AFURLRequestSerializationErrorDomain, name)
                XCTAssertEqual(nsError.code, NSURLErrorCannotDecodeRawData, name)
                XCTAssertTrue(nsError.localizedDescription.hasPrefix("The parameters cannot be written as"), nsError.localizedDescription)
            }
        }
        operations.completionQueue = DispatchQueue(label: "refusal")
        let callback = await withCheckedContinuation { (continuation: CheckedContinuation<(Bool, Int?), Never>) in
            let made = operations.post("e", parameters: lines, encoder: .urlEncodedForm, success: { _, _ in continuation.resume(returning: (true, nil)) },
                                       failure: { operation, error in continuation.resume(returning: (operation != nil, (error as NSError).code)) })
            XCTAssertNil(made)
        }
        XCTAssertFalse(callback.0)
        XCTAssertEqual(callback.1, NSURLErrorCannotDecodeRawData)
        XCTAssertEqual(server.requests.count, 0)
    }
}
