import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// `JSONValue`: an untyped JSON result that is `Sendable`, so an async verb's
/// result can leave a `Task` in Swift 6 mode (this target is built in it).
final class JSONValueTests: OperationTestCase {
    private let body = #"{"name":"Zoë","id":12,"ratio":0.5,"ok":true,"none":null,"tags":["a",2,{"k":[]}],"big":9007199254740993}"#

    override func setUpWithError() throws {
        try super.setUpWithError()
        let data = Data(body.utf8)
        server.respond("/j", headers: [("Content-Type", "application/json")], body: data)
    }

    private var expected: JSONValue {
        ["name": "Zoë", "id": 12, "ratio": 0.5, "ok": true, "none": nil, "tags": ["a", 2, ["k": []]], "big": .int(9_007_199_254_740_993)]
    }

    func testATaskReturnsTheDecodedValueFromBothManagers() async throws {
        let client = HTTPSessionManager(baseURL: server.baseURL)
        defer { client.invalidateSessionCancelingTasks(true) }
        let operations = HTTPRequestOperationManager(baseURL: server.baseURL)
        let task = Task { try await client.get("j", as: JSONValue.self) }
        let other = Task { try await operations.get("j", as: JSONValue.self) }
        let value = try await task.value
        XCTAssertEqual(value, expected)
        let fromOperations = try await other.value
        XCTAssertEqual(fromOperations, expected)
        XCTAssertEqual(value["name"]?.stringValue, "Zoë")
        XCTAssertEqual(value["id"]?.intValue, 12)
        XCTAssertEqual(value["ratio"]?.doubleValue, 0.5)
        XCTAssertEqual(value["ok"]?.boolValue, true)
        XCTAssertEqual(value["none"]?.isNull, true)
        XCTAssertEqual(value["tags"]?[2]?["k"]?.arrayValue, [])
        XCTAssertNil(value["missing"])
        XCTAssertNil(value["tags"]?[3])
    }

    func testAResponseObjectConvertsAndEncodesBack() async throws {
        let operations = HTTPRequestOperationManager(baseURL: server.baseURL)
        let (_, object) = try await operations.get("j")
        let value = try JSONValue(responseObject: object)
        XCTAssertEqual(value["name"], "Zoë")
        XCTAssertEqual(value["tags"], ["a", 2, ["k": []]])
        XCTAssertEqual(value["ok"], true)
        XCTAssertEqual(value["ratio"], 0.5)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let again = try JSONDecoder().decode(JSONValue.self, from: encoder.encode(expected))
        XCTAssertEqual(again, expected)
        XCTAssertThrowsError(try JSONValue(responseObject: ["when": Date()])) { error in
            XCTAssertEqual((error as NSError).domain, AFURLResponseSerializationErrorDomain)
            XCTAssertTrue((error as NSError).localizedDescription.contains("when"), (error as NSError).localizedDescription)
        }
        XCTAssertEqual(try JSONValue(responseObject: nil), .null)
    }
}
