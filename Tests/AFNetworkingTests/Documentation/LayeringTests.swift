import Foundation
import XCTest

/// The library's folders are layers (README.md, "How it works"): a folder may
/// use what its own layer and the layers below it declare, never what a
/// higher layer declares. The folders are one module, so the compiler does
/// not enforce it; this test does, on the sources themselves. It collects the
/// types each folder declares at the top level of its files (not nested, not
/// private: nothing else can be named from another folder) and looks for
/// their names in the code of lower layers — not in comments, not in the text
/// of string literals (their interpolations are code).
///
/// One line at a time: block comments and multi-line string literals (the
/// sources use neither) are read as code, so a false alarm from one is fixed
/// by writing that text as `//` lines.
final class LayeringTests: XCTestCase {
    /// The layers, lowest first; within a layer folders may use each other.
    /// Why layers: the engine (Core) is read, tested and changed without the
    /// front-ends built on it, and the HTTP rules without the engine; plumbing
    /// a lower layer needs lives at or below it, not in a front-end.
    private static let layers: [(name: String, folders: [String])] = [
        // Plumbing with no HTTP in it: completion queues and main-queue work,
        // files and their streams, the network's reachability.
        ("plumbing", ["Dispatch", "Files", "Reachability"]),
        // What a request is made of and the rules it follows, with no
        // lifecycle: HTTP semantics (caching, cookies, redirects, challenges,
        // resume, proxies), TLS policies, serializers, retry rules, errors.
        ("rules", ["HTTP", "Security", "Serialization", "Retry", "Errors"]),
        // One request's lifecycle: the transfer machine and the driver that
        // runs it. Observability sits beside Core, not below it: its log
        // records (`RequestLog`) take the machine's questions and outcome.
        ("engine", ["Core", "Observability"]),
        // The `Operation` front-end of a driver.
        ("operations", ["Operations"]),
        // The `URLSessionTask` front-end and the managers, one layer: a managed
        // session's tasks hold their `URLSessionManager` (the session's delegate),
        // and `HTTPRequestOperationManager` builds on the operations below.
        ("sessions and managers", ["Session", "Manager"]),
        // Built on the front-ends and managers: `async` verbs and `ResponseBytes`,
        // request graphs and the batches run as graphs, image downloading, the
        // activity indicator.
        ("built on the front-ends", ["Concurrency", "Graph", "Batch", "ImageDownloading", "ActivityIndicator"]),
        // The AFNetworking 2.x names of everything.
        ("compatibility", ["Compatibility"]),
    ]

    /// Tests/AFNetworkingTests/Documentation/ → Sources/AFNetworking.
    private static let library = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()   // Documentation
        .deletingLastPathComponent()   // AFNetworkingTests
        .deletingLastPathComponent()   // Tests
        .deletingLastPathComponent()   // the repository root
        .appendingPathComponent("Sources/AFNetworking")

    /// At most this many uses are reported one by one.
    private static let reportLimit = 50

    func testNoLayerUsesATypeDeclaredInAHigherLayer() throws {
        let files = try Self.sourceFiles()
        let declarations = try Self.declarations(in: files)
        XCTAssertEqual(declarations["TransferStateMachine"]?.layer, Self.layerOfFolder["Core"], "the declarations are found")
        XCTAssertGreaterThan(declarations.count, 100, "the declarations are found")

        var uses: [String] = []
        for file in files {
            guard let layer = Self.layerOfFolder[file.folder] else { continue }
            for (offset, line) in file.lines.enumerated() {
                for name in Set(Self.identifiers(in: Self.code(of: line))).sorted() {
                    guard let declared = declarations[name], declared.layer > layer else { continue }
                    uses.append("\(file.path):\(offset + 1) uses \(name), declared in \(declared.path) "
                                + "(layer \"\(Self.layers[declared.layer].name)\", above \"\(Self.layers[layer].name)\")")
                }
            }
        }
        for use in uses.prefix(Self.reportLimit) { XCTFail(use) }
        if uses.count > Self.reportLimit { XCTFail("… and \(uses.count - Self.reportLimit) more uses of higher layers") }
    }

    func testEveryFolderIsInOneLayer() throws {
        let folders = try Set(Self.sourceFiles().map(\.folder))
        let listed = Self.layers.flatMap { $0.folders }
        XCTAssertEqual(listed.count, Set(listed).count, "a folder is listed in one layer only")
        for folder in folders.sorted() where !listed.contains(folder) {
            XCTFail(folder.isEmpty ? "a .swift file directly in Sources/AFNetworking belongs in a folder"
                                   : "Sources/AFNetworking/\(folder) is in no layer of LayeringTests.layers: add it where it belongs")
        }
        for folder in listed where !folders.contains(folder) {
            XCTFail("LayeringTests.layers lists \(folder), which holds no .swift file")
        }
    }

    func testCommentsAndStringTextAreNoUses() {
        XCTAssertEqual(Self.names(in: "    // RequestDriver feeds it"), [])
        XCTAssertEqual(Self.names(in: "let x = Foo() // Bar"), ["let", "x", "Foo"])
        XCTAssertEqual(Self.names(in: #"fail("Bar is \(Baz.name)")"#), ["fail", "Baz", "name"])
        XCTAssertEqual(Self.names(in: #"let url = "http://Bar"; Baz()"#), ["let", "url", "Baz"])
        XCTAssertEqual(Self.names(in: ##"let a = #"Bar "quoted" \(Qux)"#, b"##), ["let", "a", "b"])
        XCTAssertEqual(Self.names(in: #"f("\(g("Bar")) Qux", Baz)"#), ["f", "g", "Baz"])
    }

    func testOnlyTopLevelTypesThatOtherFilesCanNameAreDeclarations() throws {
        let pattern = try Self.declarationPattern()
        XCTAssertEqual(Self.declaredType(in: "public final class Foo: Bar {", pattern: pattern), "Foo")
        XCTAssertEqual(Self.declaredType(in: "enum Foo {", pattern: pattern), "Foo")
        XCTAssertEqual(Self.declaredType(in: #"@available(*, deprecated, renamed: "Foo") public typealias AFFoo = Foo"#,
                                         pattern: pattern), "AFFoo")
        XCTAssertNil(Self.declaredType(in: "private enum Hidden {", pattern: pattern))
        XCTAssertNil(Self.declaredType(in: "    struct Nested {", pattern: pattern))
        XCTAssertNil(Self.declaredType(in: "extension Foo {", pattern: pattern))
    }

    // MARK: - Reading the sources

    private struct SourceFile {
        /// Relative to Sources/AFNetworking, e.g. `Core/RequestDriver.swift`.
        let path: String
        /// The first component of `path` ("" for a file directly in Sources/AFNetworking).
        let folder: String
        let lines: [Substring]
    }

    /// Folder → index of its layer in `layers`.
    private static let layerOfFolder: [String: Int] = {
        var table: [String: Int] = [:]
        for (index, layer) in layers.enumerated() {
            for folder in layer.folders { table[folder] = index }
        }
        return table
    }()

    private static func sourceFiles() throws -> [SourceFile] {
        guard let enumerator = FileManager.default.enumerator(atPath: library.path) else { return [] }
        var paths: [String] = []
        while let path = enumerator.nextObject() as? String {
            if path.hasSuffix(".swift") { paths.append(path) }
        }
        XCTAssertGreaterThan(paths.count, 50, "the library's sources are found from the test's own path")
        return try paths.sorted().map { path -> SourceFile in
            let text = try String(contentsOf: library.appendingPathComponent(path), encoding: .utf8)
            let folder = path.firstIndex(of: "/").map { String(path[..<$0]) } ?? ""
            return SourceFile(path: path, folder: folder, lines: text.split(separator: "\n", omittingEmptySubsequences: false))
        }
    }

    /// The top-level types the layers declare: name → layer and declaring
    /// file. A name declared in two layers names two things and is left out.
    private static func declarations(in files: [SourceFile]) throws -> [String: (layer: Int, path: String)] {
        let pattern = try declarationPattern()
        var declarations: [String: (layer: Int, path: String)] = [:]
        var ambiguous: Set<String> = []
        for file in files {
            guard let layer = layerOfFolder[file.folder] else { continue }
            for line in file.lines {
                guard let name = declaredType(in: line, pattern: pattern) else { continue }
                if let known = declarations[name] {
                    if known.layer != layer { ambiguous.insert(name) }
                } else {
                    declarations[name] = (layer: layer, path: file.path)
                }
            }
        }
        for name in ambiguous { declarations[name] = nil }
        return declarations
    }

    /// A declaration at the top level of a file (column 0), after attributes
    /// and modifiers; `private` and `fileprivate` ones are not matched.
    private static func declarationPattern() throws -> NSRegularExpression {
        try NSRegularExpression(pattern: #"^(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|package|internal|open|final|indirect|nonisolated)\s+)*"#
                                    + #"(?:class|struct|enum|protocol|actor|typealias)\s+([A-Za-z_]\w*)"#)
    }

    private static func declaredType(in line: Substring, pattern: NSRegularExpression) -> String? {
        guard let first = line.first, first.isLetter || first == "@" else { return nil }
        let text = String(line)
        guard let match = pattern.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)),
              let name = Range(match.range(at: 1), in: text) else { return nil }
        return String(text[name])
    }

    // MARK: - Reading one line

    private static func names(in line: Substring) -> [String] {
        identifiers(in: code(of: line))
    }

    /// `line` without its `//` comment and the text of its string literals
    /// (raw ones included); an interpolation's code is kept.
    private static func code(of line: Substring) -> [UInt8] {
        let bytes = Array(line.utf8)
        let quote = UInt8(ascii: "\""), hashSign = UInt8(ascii: "#"), backslash = UInt8(ascii: "\\")
        let openParenthesis = UInt8(ascii: "("), closeParenthesis = UInt8(ascii: ")")
        let slash = UInt8(ascii: "/"), space = UInt8(ascii: " ")
        var kept: [UInt8] = []
        var index = 0
        var inString = false
        /// The `#`s of the raw string being read (0: not raw).
        var hashes = 0
        var parentheses = 0
        /// For each interpolation being read, `parentheses` before its `\(`.
        var interpolations: [Int] = []
        while index < bytes.count {
            let byte = bytes[index]
            if inString {
                if hashes == 0, byte == backslash, index + 1 < bytes.count {
                    if bytes[index + 1] == openParenthesis {
                        // `\(`: code until its `)`.
                        interpolations.append(parentheses)
                        parentheses += 1
                        inString = false
                        kept.append(space)
                    }
                    index += 2
                    continue
                }
                if byte == quote, index + hashes < bytes.count,
                   (0..<hashes).allSatisfy({ bytes[index + 1 + $0] == hashSign }) {
                    inString = false
                    kept.append(space)
                    index += 1 + hashes
                    continue
                }
                index += 1
                continue
            }
            if byte == slash, index + 1 < bytes.count, bytes[index + 1] == slash { break }
            if byte == quote || byte == hashSign {
                var count = 0
                while index + count < bytes.count, bytes[index + count] == hashSign { count += 1 }
                if index + count < bytes.count, bytes[index + count] == quote {
                    inString = true
                    hashes = count
                    index += count + 1
                    continue
                }
            }
            if byte == openParenthesis { parentheses += 1 }
            if byte == closeParenthesis {
                parentheses -= 1
                if let opened = interpolations.last, parentheses == opened {
                    // Back in the (non-raw) string the interpolation was in.
                    interpolations.removeLast()
                    inString = true
                    hashes = 0
                    index += 1
                    continue
                }
            }
            kept.append(byte)
            index += 1
        }
        return kept
    }

    /// The identifiers in `code`, in order (ASCII letters, digits and `_`).
    private static func identifiers(in code: [UInt8]) -> [String] {
        var found: [String] = []
        var current: [UInt8] = []
        for byte in code {
            let isLetter = (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || byte == 0x5F
            let isDigit = byte >= 0x30 && byte <= 0x39
            if isLetter || (isDigit && !current.isEmpty) {
                current.append(byte)
            } else if !current.isEmpty {
                found.append(String(decoding: current, as: UTF8.self))
                current.removeAll(keepingCapacity: true)
            }
        }
        if !current.isEmpty { found.append(String(decoding: current, as: UTF8.self)) }
        return found
    }
}
