@testable import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// The batch list's format and the checks `ResumableBatch.init` makes before
/// touching anything: fields, ids, dependencies, cycles and output paths.
final class ResumableBatchListTests: XCTestCase {
    private func badLine(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> (Int, String)? {
        do {
            _ = try ResumableBatchList.parse(text)
            XCTFail("parsed: \(text)", file: file, line: line)
        } catch ResumableBatchError.badLine(let number, let reason) {
            return (number, reason)
        } catch {
            XCTFail("\(error)", file: file, line: line)
        }
        return nil
    }

    func testFieldsCommentsAndBareURLs() throws {
        let text = """
            # nightly
              # indented comment
            http://h/login\tid=login

            http://h/a.tar   id=a   after=login   out=dist/a.tar
            http://h/b.tar after=login,a
            h/plain
            not a url
            http://h/x#frag id=frag\r
            """
        let lines = try ResumableBatchList.parse(text)
        XCTAssertEqual(lines, [
            ResumableBatchList.Line(number: 3, url: "http://h/login", id: "login"),
            ResumableBatchList.Line(number: 5, url: "http://h/a.tar", id: "a", after: ["login"], outputPath: "dist/a.tar"),
            ResumableBatchList.Line(number: 6, url: "http://h/b.tar", after: ["login", "a"]),
            ResumableBatchList.Line(number: 7, url: "h/plain"),
            // A word that is not a field: the whole line is the URL (it fails as one, as before).
            ResumableBatchList.Line(number: 8, url: "not a url"),
            ResumableBatchList.Line(number: 9, url: "http://h/x#frag", id: "frag"),
        ])
        XCTAssertEqual(lines.map(\.name), ["login", "a", "#6", "#7", "#8", "frag"])
    }

    func testBadFieldsNameTheLine() {
        XCTAssertEqual(badLine("http://h/a\nhttp://h/b colour=red")?.0, 2)
        XCTAssertTrue(badLine("http://h/b colour=red")?.1.contains("unknown field 'colour='") == true)
        XCTAssertTrue(badLine("http://h/b id=a id=b")?.1.contains("twice") == true)
        XCTAssertTrue(badLine("http://h/b out=")?.1.contains("no value") == true)
        XCTAssertTrue(badLine("http://h/b after=a,,b")?.1.contains("empty id") == true)
        XCTAssertTrue(badLine("http://h/b id=#3")?.1.contains("not an id") == true)
        XCTAssertTrue(badLine("http://h/b after=x=y")?.1.contains("not an id") == true)
        XCTAssertNotNil(badLine("http://h/a http://h/b?x=1"), "a second URL with a query reads as an unknown field")
        // An inline note beside fields would make the line one URL and lose them.
        let inline = badLine("http://h/a id=a after=login # the big one")
        XCTAssertEqual(inline?.0, 1)
        XCTAssertTrue(inline?.1.contains("'#' is not a field") == true, "\(String(describing: inline))")
    }

    private func entry(_ id: String, _ after: [String] = [], out: String? = nil, url: String? = nil) -> ResumableBatchEntry {
        ResumableBatchEntry(id: id, url: URL(string: url ?? "http://127.0.0.1/\(id).bin")!, dependencies: after, outputPath: out)
    }

    private func refusal(_ entries: [ResumableBatchEntry], directory: Bool = true,
                         file: StaticString = #filePath, line: UInt = #line) -> ResumableBatchError? {
        do {
            _ = try ResumableBatch(entries: entries, outputDirectory: directory ? URL(fileURLWithPath: "/nonexistent-\(UUID())") : nil)
            XCTFail("accepted", file: file, line: line)
        } catch let error as ResumableBatchError {
            XCTAssertTrue(error.refusesBatch, file: file, line: line)
            return error
        } catch {
            XCTFail("\(error)", file: file, line: line)
        }
        return nil
    }

    func testDependencyOrderKeepsTheGivenOrderWhereItCan() throws {
        let entries = [entry("c", ["b"]), entry("a"), entry("b", ["a"]), entry("d")]
        XCTAssertEqual(try ResumableBatch.dependencyOrder(of: entries).map { entries[$0].id }, ["a", "b", "c", "d"])
    }

    func testIDsAndDependenciesAreChecked() {
        XCTAssertEqual(refusal([entry("a"), entry("a", out: "other")]), .duplicateID("a"))
        XCTAssertEqual(refusal([entry("a", ["ghost"])]), .unknownDependency(id: "a", dependency: "ghost"))
        XCTAssertEqual(refusal([entry("a", ["a"])]), .cycle(["a", "a"]))
        XCTAssertEqual(refusal([entry("x"), entry("a", ["c"]), entry("b", ["a"]), entry("c", ["b"])]), .cycle(["a", "c", "b", "a"]))
    }

    func testOutputPathsMustStayInside() {
        for path in ["../x", "a/../../x", "/etc/passwd", "a//b", "a/", "./a", "a/./b", ".."] {
            guard case .unsafeOutputPath(let id, let given, _)? = refusal([entry("e", out: path)]) else {
                return XCTFail("\(path) was not refused as unsafe")
            }
            XCTAssertEqual(id, "e")
            XCTAssertEqual(given, path)
        }
        // Refused even without an output directory: the list itself is unsafe.
        guard case .unsafeOutputPath? = refusal([entry("e", out: "../x")], directory: false) else { return XCTFail() }
        // Named by the URL: a decoded "/" or ".." cannot lead out either.
        guard case .unsafeOutputPath? = refusal([entry("e", url: "http://127.0.0.1/a/..%2F..%2Fescape")]) else { return XCTFail() }
        XCTAssertEqual(refusal([entry("e", url: "http://127.0.0.1/")]), .noFileName(id: "e"))
    }

    func testTwoEntriesOnOneFileAreRefused() {
        XCTAssertEqual(refusal([entry("a", url: "http://h/x/f.bin"), entry("b", url: "http://h/y/f.bin")]),
                       .sameOutputFile(path: "f.bin", ids: ["a", "b"]))
        XCTAssertEqual(refusal([entry("a", out: "f"), entry("b", out: "f.partial")]),
                       .sameOutputFile(path: "f.partial", ids: ["a", "b"]))
        XCTAssertEqual(refusal([entry("a", out: "d"), entry("b", out: "d/f")]), .sameOutputFile(path: "d", ids: ["a", "b"]))
        XCTAssertEqual(refusal([entry("a", out: "d/f"), entry("b", out: "d")]), .sameOutputFile(path: "d", ids: ["a", "b"]))
        // Without a directory nothing is written, so nothing collides.
        XCTAssertNoThrow(try ResumableBatch(entries: [entry("a", out: "f"), entry("b", out: "f")]))
    }

    func testTheErrorBridgesWithItsDomain() {
        let error = ResumableBatchError.foreignManifest(path: "/m") as NSError
        XCTAssertEqual(error.domain, "AFNetworking.ResumableBatchError")
        XCTAssertEqual(error.code, 9)
        XCTAssertTrue(error.localizedDescription.contains("other content"), error.localizedDescription)
    }
}
