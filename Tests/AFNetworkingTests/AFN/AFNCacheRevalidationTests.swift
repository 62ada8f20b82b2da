import Foundation
import XCTest

/// `afn` keeps a response cache but never prints a stored answer without
/// asking the server, as curl (which has none) never can: a changed file is
/// printed changed, even when its `Last-Modified` alone (nginx sends no
/// `Cache-Control`) would make the stored answer heuristically fresh for a
/// day. The real binary against nginx, with a cache directory of the test's own.
final class AFNCacheRevalidationTests: XCTestCase {
    private var cacheHome: URL!

    override func setUpWithError() throws {
        cacheHome = FileManager.default.temporaryDirectory.appendingPathComponent("afn-cache-home-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: cacheHome, withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: cacheHome)
    }

    private func afn(_ arguments: [String]) throws -> AFNTool.Run {
        try AFNTool.run(arguments, timeout: 30, environment: ["XDG_CACHE_HOME": cacheHome.path, "HOME": cacheHome.path])
    }

    func testAChangedFileIsPrintedChangedThoughTheCacheWouldCallItFresh() throws {
        let nginx = try SharedServers.nginx()
        let name = "afn-fresh-\(UUID().uuidString).txt"
        let file = nginx.directory.appendingPathComponent("www/\(name)")
        addTeardownBlock { try? FileManager.default.removeItem(at: file) }
        // Changed ten days ago: 10 % of that, a day, is the heuristic freshness (RFC 9111 §4.2.2).
        try Data("version A\n".utf8).write(to: file)
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-10 * 86_400)], ofItemAtPath: file.path)
        let target = nginx.httpURL.appendingPathComponent(name).absoluteString

        let first = try afn(["get", target])
        XCTAssertEqual(first.status, 0, first.stderr)
        XCTAssertEqual(first.output, "version A\n")

        try Data("version B\n".utf8).write(to: file)
        let second = try afn(["get", target])
        XCTAssertEqual(second.status, 0, second.stderr)
        XCTAssertEqual(second.output, "version B\n", "the file as it is now, as curl prints it, not the stored answer")

        // Unchanged since, the stored answer is used — once the server confirmed it.
        let third = try afn(["get", "-v", target])
        XCTAssertEqual(third.status, 0, third.stderr)
        XCTAssertEqual(third.output, "version B\n")
        XCTAssertTrue(third.stderr.contains("< HTTP/1.1 304"), "revalidated, not served as fresh: \(third.stderr)")
    }

    func testHelpSaysAStoredResponseIsAlwaysRevalidated() throws {
        let help = try afn(["--help"])
        XCTAssertEqual(help.status, 0)
        // The help is wrapped at the terminal's width: compared with its words joined by single spaces.
        let words = help.output.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        XCTAssertTrue(words.contains("revalidate them on every run"), help.output)
    }
}
