import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import AFNetworking

let testBaseURL = URL(string: "https://example.com/resource")!

/// An HTTP response for `testBaseURL` with the given status and content type.
func makeResponse(status: Int = 200, contentType: String? = "application/json",
                  headers: [String: String] = [:]) -> HTTPURLResponse {
    var fields = headers
    if let contentType = contentType { fields["Content-Type"] = contentType }
    guard let response = HTTPURLResponse(url: testBaseURL, statusCode: status, httpVersion: "HTTP/1.1",
                                         headerFields: fields) else {
        preconditionFailure("HTTPURLResponse init failed")
    }
    return response
}

/// Runs `body` expecting it to throw an `NSError`, and returns it.
func assertThrowsNSError<T>(_ body: @autoclosure () throws -> T, file: StaticString = #filePath,
                            line: UInt = #line) -> NSError? {
    do {
        _ = try body()
        XCTFail("expected an error", file: file, line: line)
        return nil
    } catch {
        return error as NSError
    }
}

/// A tiny deterministic generator so randomized tests reproduce from their seed.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed &+ 0x9E3779B97F4A7C15 }
    mutating func next() -> UInt64 {
        state &+= 0x9E3779B97F4A7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58476D1CE4E5B9
        z = (z ^ (z >> 27)) &* 0x94D049BB133111EB
        return z ^ (z >> 31)
    }
}

/// Round-trips an NSSecureCoding object through a keyed archive.
func archiveRoundTrip<T: NSObject & NSSecureCoding>(_ object: T, as type: T.Type) throws -> T? {
    let data = try NSKeyedArchiver.archivedData(withRootObject: object, requiringSecureCoding: true)
    return try NSKeyedUnarchiver.unarchivedObject(ofClass: type, from: data)
}
