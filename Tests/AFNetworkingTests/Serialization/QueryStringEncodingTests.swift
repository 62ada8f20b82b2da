import Foundation
import XCTest
@testable import AFNetworking

final class QueryStringEncodingTests: XCTestCase {
    private func query(_ parameters: Any) -> String { QueryStringEncoding.queryString(from: parameters) }

    func testNestedDictionariesArraysAndSortedKeys() {
        XCTAssertEqual(query(["b": "2", "a": "1"]), "a=1&b=2")
        XCTAssertEqual(query(["a": ["b": 1]]), "a%5Bb%5D=1")
        XCTAssertEqual(query(["a": [1, 2]]), "a%5B%5D=1&a%5B%5D=2")
        XCTAssertEqual(query(["a": [["c": 1, "b": 2]]]), "a%5B%5D%5Bb%5D=2&a%5B%5D%5Bc%5D=1")
        XCTAssertEqual(query(["s": Set(["z", "y", "x"])]), "s=x&s=y&s=z")
    }

    func testNullsBoolsAndNumbers() {
        XCTAssertEqual(query(["n": NSNull()]), "n")
        let missing: String? = nil
        XCTAssertEqual(query(["n": missing as Any]), "n")
        XCTAssertEqual(query(["t": true, "f": false]), "f=0&t=1")
        XCTAssertEqual(query(["i": 42, "d": 2.5, "w": 3.0, "neg": -7]), "d=2.5&i=42&neg=-7&w=3")
        XCTAssertEqual(query(["nb": NSNumber(value: true), "nd": NSNumber(value: 1.0), "ni": NSNumber(value: 9)]), "nb=1&nd=1&ni=9")
    }

    /// An `Int8` is its number, not a boolean: its NSNumber's objCType is "c",
    /// as a `Bool`'s is on Linux, and `Int8(42)` was sent as "1". A `Decimal`
    /// keeps all its digits: through `Double` it lost the last ones.
    func testInt8AndDecimalKeepTheirValues() throws {
        let decimal = try XCTUnwrap(Decimal(string: "12345678901234567.89"))
        let parameters: [String: Any] = ["n": Int8(42), "b": true, "d": decimal]
        let expected = "b=1&d=12345678901234567.89&n=42"
        XCTAssertEqual(query(parameters), expected)
        XCTAssertEqual(query(["n": NSNumber(value: Int8(42)), "m": NSNumber(value: Int8(-7)), "o": NSNumber(value: Int8(1)),
                              "t": NSNumber(value: true), "f": NSNumber(value: false)]), "f=0&m=-7&n=42&o=1&t=1")
        XCTAssertEqual(query(["d": NSDecimalNumber(decimal: decimal)]), "d=12345678901234567.89")

        let serializer = HTTPRequestSerializer()
        XCTAssertEqual(try serializer.request(withMethod: "GET", urlString: "http://127.0.0.1/q", parameters: parameters).url?.query, expected)
        let form = try serializer.request(withMethod: "POST", urlString: "http://127.0.0.1/q", parameters: parameters)
        XCTAssertEqual(form.httpBody.flatMap { String(data: $0, encoding: .utf8) }, expected)
    }

    /// A `Float` prints in its own precision, as NSNumber's description does in 2.7.
    func testFloatsPrintAsNSNumberDoes() throws {
        XCTAssertEqual(query(["f": Float(0.1)]), "f=0.1")
        XCTAssertEqual(query(["f": NSNumber(value: Float(0.1))]), "f=0.1")
        XCTAssertEqual(query(["f": Float(-2.75), "g": Float(3)]), "f=-2.75&g=3")
        XCTAssertEqual(query(["d": 0.1, "e": NSNumber(value: 0.1)]), "d=0.1&e=0.1")
        XCTAssertEqual(try HTTPRequestSerializer().request(withMethod: "GET", urlString: "http://127.0.0.1/q",
                                                           parameters: ["f": Float(0.1)]).url?.query, "f=0.1")
    }

    func testNSCollections() {
        let dictionary = NSDictionary(dictionary: ["k": NSArray(array: ["v1", "v2"])])
        XCTAssertEqual(query(dictionary), "k%5B%5D=v1&k%5B%5D=v2")
        XCTAssertEqual(query(["s": NSSet(array: ["b", "a"])]), "s=a&s=b")
    }

    func testKeysSortByUTF16CodeUnits() {
        XCTAssertEqual(query(["b": 1, "B": 2, "a": 3, "_": 4]), "B=2&_=4&a=3&b=1")
    }

    func testRoundTripProperty() {
        var generator = SeededGenerator(seed: 42)
        let alphabet = Array("abcXYZ019 -._~:/?#[]@!$&'()*+,;=%\"<>\\^`{|}é€😀\u{0}\n")
        func randomString() -> String {
            let length = Int.random(in: 0...12, using: &generator)
            return String((0..<length).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &generator)] })
        }
        for _ in 0..<300 {
            var parameters: [String: String] = [:]
            for _ in 0..<Int.random(in: 1...6, using: &generator) { parameters[randomString()] = randomString() }
            let encoded = query(parameters)
            // Only unreserved characters, "/", "?", "%", "=" and "&" may appear unescaped.
            let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~/?%=&")
            XCTAssertTrue(encoded.allSatisfy { allowed.contains($0) }, encoded)
            var decoded: [String: String] = [:]
            for component in encoded.split(separator: "&", omittingEmptySubsequences: false) where !encoded.isEmpty {
                let parts = component.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let key = String(parts[0]).removingPercentEncoding ?? "<bad>"
                let value = parts.count > 1 ? (String(parts[1]).removingPercentEncoding ?? "<bad>") : "<null>"
                decoded[key] = value
            }
            XCTAssertEqual(decoded, parameters)
            let keys = encoded.split(separator: "&").map { String($0.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)[0]).removingPercentEncoding ?? "" }
            XCTAssertEqual(keys, keys.sorted { QueryStringEncoding.precedes($0, $1) })
        }
    }

    func testDeepStructuresAreBounded() {
        var nested: Any = ["leaf": 1]
        for _ in 0..<1000 { nested = ["n": nested] }
        let pairs = query(nested).components(separatedBy: "&")
        XCTAssertEqual(pairs.count, 1, "the part below the bound is written as one leaf")
        let field = pairs.first?.components(separatedBy: "=").first ?? ""
        // Descent stops at the bound: the key names exactly `maximumDepth` levels, never the real leaf.
        XCTAssertTrue(field.hasPrefix("n%5Bn%5D"), field.prefix(40) + "…")
        XCTAssertEqual(field.components(separatedBy: "%5Bn%5D").count - 1, QueryStringEncoding.maximumDepth - 1)
        XCTAssertFalse(field.contains("leaf"), "descended past the bound to the leaf")
    }
}
