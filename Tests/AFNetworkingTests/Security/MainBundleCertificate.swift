import Foundation
import XCTest

/// Runs `body` while `der` sits as a `.cer` file in `Bundle.main`'s resources
/// (on Linux: the directory of the test runner executable), which is where
/// `SecurityPolicy(pinningMode:)` looks for default pinned certificates.
func withCertificateInMainBundle(_ der: Data, _ body: () throws -> Void) throws {
    guard let directory = Bundle.main.resourceURL ?? Optional(Bundle.main.bundleURL) else {
        throw XCTSkip("Bundle.main has no resource directory")
    }
    let file = directory.appendingPathComponent("afnetworking-test-\(UUID().uuidString).cer")
    do {
        try der.write(to: file)
    } catch {
        throw XCTSkip("cannot write to \(directory.path): \(error)")
    }
    defer { try? FileManager.default.removeItem(at: file) }
    try body()
}
