@testable import AFNetworking
import Foundation
import XCTest

/// What the multipart suites share: a request serializer, and a temporary
/// directory made for each test (removed after it) to hold part files.
class MultipartTestCase: XCTestCase {
    let serializer = HTTPRequestSerializer()
    var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("afn-multipart-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: directory)
    }

    /// Writes `contents` to `name` in the test's directory.
    func file(_ name: String, _ contents: Data) throws -> URL {
        let url = directory.appendingPathComponent(name)
        try contents.write(to: url)
        return url
    }
}
