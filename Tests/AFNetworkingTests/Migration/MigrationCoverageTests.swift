@testable import AFNetworking
import Foundation
import XCTest

/// Migration.md names every public symbol of AFNetworking 2.7.
///
/// `afnetworking-2.7-symbols.txt`, next to this file, lists them as
/// `scripts/afnetworking-2.7-symbols.py` read them from 2.7.0's headers (it is
/// committed, so this test needs no copy of AFNetworking). A symbol counts as
/// covered when its identifying part appears in a code span of Migration.md
/// as a whole token: the selector of a method (`GET:parameters:success:failure:`,
/// with or without its `-`/`+`), the name of a property, and the whole name of
/// anything else (classes, protocols, categories, enums and their cases,
/// constants, functions).
final class MigrationCoverageTests: XCTestCase {
    /// This file's directory, which holds the symbol list.
    private static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()

    /// The repository root: Tests/AFNetworkingTests/Migration/ is three levels down.
    private static let repositoryRoot = directory
        .deletingLastPathComponent()
        .deletingLastPathComponent()
        .deletingLastPathComponent()

    private func symbols() throws -> [String] {
        let url = Self.directory.appendingPathComponent("afnetworking-2.7-symbols.txt")
        let text = try String(contentsOf: url, encoding: .utf8)
        return text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    private func migrationGuide() throws -> String {
        try String(contentsOf: Self.repositoryRoot.appendingPathComponent("Migration.md"), encoding: .utf8)
    }

    /// `-[AFClass sel:ector:]` → `sel:ector:`; `AFClass.property` → `property`; anything else as is.
    static func identifyingPart(of symbol: String) -> String {
        if symbol.hasPrefix("-[") || symbol.hasPrefix("+["), symbol.hasSuffix("]"), let space = symbol.firstIndex(of: " ") {
            return String(symbol[symbol.index(after: space)..<symbol.index(before: symbol.endIndex)])
        }
        if let dot = symbol.lastIndex(of: ".") {
            return String(symbol[symbol.index(after: dot)...])
        }
        return symbol
    }

    /// The text between backticks, pairing them from the left on each line.
    static func codeSpans(in markdown: String) -> [Substring] {
        markdown.split(separator: "\n", omittingEmptySubsequences: false).flatMap { line -> [Substring] in
            let pieces = line.split(separator: "`", omittingEmptySubsequences: false)
            guard pieces.count > 2 else { return [] }
            // Pieces 1, 3, 5, … are between a backtick and the next one; an
            // unclosed last one is not a span.
            return stride(from: 1, to: pieces.count - 1, by: 2).map { pieces[$0] }
        }
    }

    /// Whether `token` occurs in `span` with no identifier character or `:` right before or after it.
    static func span(_ span: Substring, containsToken token: String) -> Bool {
        let characters = Array(span.unicodeScalars)
        let wanted = Array(token.unicodeScalars)
        guard !wanted.isEmpty, characters.count >= wanted.count else { return false }
        /// ASCII letters and digits, `_` and `:` continue a selector or a name.
        func joins(_ scalar: Unicode.Scalar) -> Bool {
            let value = scalar.value
            return scalar == ":" || scalar == "_" || (48...57).contains(value) || (65...90).contains(value) || (97...122).contains(value)
        }
        for start in 0...(characters.count - wanted.count) where Array(characters[start..<(start + wanted.count)]) == wanted {
            let end = start + wanted.count
            if start > 0, joins(characters[start - 1]) { continue }
            if end < characters.count, joins(characters[end]) { continue }
            return true
        }
        return false
    }

    func testTheSymbolListLooksLikeAFNetworking2_7() throws {
        let symbols = try symbols()
        XCTAssertGreaterThan(symbols.count, 250, "the list should hold every public 2.7 symbol")
        XCTAssertEqual(symbols, symbols.sorted(), "the list is committed sorted")
        XCTAssertEqual(Set(symbols).count, symbols.count, "no symbol is listed twice")
        for expected in ["-[AFHTTPRequestOperationManager GET:parameters:success:failure:]",
                         "+[AFNetworkReachabilityManager sharedManager]",
                         "AFHTTPRequestOperation.responseObject",
                         "AFStringFromNetworkReachabilityStatus",
                         "AFNetworkReachabilityStatusReachableViaWiFi",
                         "AFNetworkingReachabilityDidChangeNotification",
                         "AFURLResponseSerializationErrorDomain",
                         "AFMultipartFormData",
                         "UIImageView+AFNetworking",
                         "-[UIImageView(AFNetworking) setImageWithURL:]"] {
            XCTAssertTrue(symbols.contains(expected), "\(expected) is missing from the list")
        }
    }

    func testIdentifyingParts() {
        XCTAssertEqual(Self.identifyingPart(of: "-[AFHTTPSessionManager GET:parameters:success:failure:]"), "GET:parameters:success:failure:")
        XCTAssertEqual(Self.identifyingPart(of: "+[AFSecurityPolicy defaultPolicy]"), "defaultPolicy")
        XCTAssertEqual(Self.identifyingPart(of: "UIWebView(AFNetworking).requestSerializer"), "requestSerializer")
        XCTAssertEqual(Self.identifyingPart(of: "UIButton+AFNetworking"), "UIButton+AFNetworking")
        XCTAssertEqual(Self.identifyingPart(of: "kAFUploadStream3GSuggestedDelay"), "kAFUploadStream3GSuggestedDelay")
    }

    func testTokensAreMatchedWhole() {
        XCTAssertTrue(Self.span("-GET:parameters:success:failure:", containsToken: "GET:parameters:success:failure:"))
        XCTAssertFalse(Self.span("-GET:parameters:progress:success:failure:", containsToken: "GET:parameters:success:failure:"))
        XCTAssertFalse(Self.span("-initWithBaseURL:sessionConfiguration:", containsToken: "initWithBaseURL:"))
        XCTAssertFalse(Self.span("responseData", containsToken: "response"))
        XCTAssertTrue(Self.span("HTTPRequestOperation.response", containsToken: "response"))
        XCTAssertEqual(Self.codeSpans(in: "a `one` b `two` c `open").map(String.init), ["one", "two"])
    }

    func testMigrationGuideNamesEverySymbolOf2_7() throws {
        let spans = Self.codeSpans(in: try migrationGuide())
        XCTAssertFalse(spans.isEmpty)
        let missing = try symbols().filter { symbol in
            let token = Self.identifyingPart(of: symbol)
            return !spans.contains { Self.span($0, containsToken: token) }
        }
        XCTAssertTrue(missing.isEmpty, """
            Migration.md does not name \(missing.count) AFNetworking 2.7 symbol(s) in backticks \
            (methods by selector, properties by name):
            \(missing.joined(separator: "\n"))
            """)
    }
}
