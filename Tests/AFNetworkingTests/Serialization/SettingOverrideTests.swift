import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
import AFNetworking

/// A 2.x subclass overrides a serializer's `open` setting (a locked field
/// underneath) with observers or its own accessors; the override is what the
/// serializer reads when it builds a request.
final class SettingOverrideTests: XCTestCase {
    private final class ClampingSerializer: HTTPRequestSerializer, @unchecked Sendable {
        // @unchecked: `observed` is written only by the test's own thread.
        var observed: [String] = []

        override var timeoutInterval: TimeInterval {
            get { super.timeoutInterval }
            set { super.timeoutInterval = min(newValue, 30) }
        }
        override var cachePolicy: URLRequest.CachePolicy {
            didSet { observed.append("\(oldValue.rawValue)->\(cachePolicy.rawValue)") }
        }
    }

    func testAnOverriddenSetterAndObserverRunAndTheRequestUsesTheirResult() throws {
        let serializer = ClampingSerializer()
        serializer.timeoutInterval = 120
        serializer.cachePolicy = .reloadIgnoringLocalCacheData
        XCTAssertEqual(serializer.timeoutInterval, 30)
        let (before, after) = (URLRequest.CachePolicy.useProtocolCachePolicy, URLRequest.CachePolicy.reloadIgnoringLocalCacheData)
        XCTAssertEqual(serializer.observed, ["\(before.rawValue)->\(after.rawValue)"])

        let request = try serializer.request(withMethod: "GET", urlString: "http://127.0.0.1/", parameters: nil)
        XCTAssertEqual(request.timeoutInterval, 30)
        XCTAssertEqual(request.cachePolicy, .reloadIgnoringLocalCacheData)

        let base: HTTPRequestSerializer = serializer
        base.timeoutInterval = 90
        XCTAssertEqual(base.timeoutInterval, 30, "set through the base type, the override still runs")
    }
}
