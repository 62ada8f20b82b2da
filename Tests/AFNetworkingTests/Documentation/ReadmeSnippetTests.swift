import Foundation
import XCTest

/// Every ```swift block of README.md is a program that compiles against the
/// package as built for these tests: each block is written to a directory of
/// its own as `main.swift` and compiled to SIL (`-emit-sil`, so the Swift 6
/// checks made on SIL run too) with the toolchain's `swiftc` in Swift 6 mode,
/// warnings as errors. A block whose last non-blank line before the fence is
/// `<!-- snippet: continues -->` is appended to the block before it (the
/// README shows those as "continued"). Blocks that are not Swift programs
/// (shell commands) are fenced ```sh and left alone.
///
/// The DocC articles' blocks are checked the same way (see
/// `testEverySwiftSnippetInTheDocCArticlesTypeChecks`); a block that needs
/// another framework follows `<!-- snippet: not checked -->`.
///
/// `scripts/check-readme-snippets.sh` applies the README's rules outside XCTest.
final class ReadmeSnippetTests: XCTestCase {
    /// The longest one `swiftc` run may take (a cold module cache costs a few seconds).
    private static let timeout: TimeInterval = 180

    func testEverySwiftSnippetInTheReadmeTypeChecks() throws {
        let readme = Self.repositoryRoot.appendingPathComponent("README.md")
        let snippets = try ReadmeSnippets.extract(from: String(contentsOf: readme, encoding: .utf8))
        XCTAssertGreaterThanOrEqual(snippets.count, 5, "README.md should hold the usage examples as ```swift blocks")
        try typeCheck(snippets, of: "README.md")
    }

    /// The DocC articles' ```swift blocks, by the README's rules, except that
    /// an article may show a fragment: each block starts with an implicit
    /// `import DocSnippetContext`, a module that re-exports AFNetworking and
    /// Foundation and declares the objects the articles take for granted
    /// (`manager`, `api`, `operation` …). A block that declares one of those
    /// names itself shadows the context's.
    func testEverySwiftSnippetInTheDocCArticlesTypeChecks() throws {
        let catalog = Self.repositoryRoot.appendingPathComponent("Sources/AFNetworking/AFNetworking.docc")
        let articles = try FileManager.default.contentsOfDirectory(atPath: catalog.path).filter { $0.hasSuffix(".md") }.sorted()
        XCTAssertGreaterThanOrEqual(articles.count, 10, "the DocC catalog's articles")
        var total = 0
        try withScratchDirectory { scratch in
            let context = try buildSnippetContext(in: scratch)
            for article in articles {
                let markdown = try String(contentsOf: catalog.appendingPathComponent(article), encoding: .utf8)
                let snippets = try ReadmeSnippets.extract(from: markdown).map {
                    ReadmeSnippets.Snippet(line: $0.line, source: "import DocSnippetContext\n" + $0.source)
                }
                total += snippets.count
                try typeCheck(snippets, of: article, extraFlags: ["-I", context.path], scratch: scratch)
            }
        }
        XCTAssertGreaterThanOrEqual(total, 40, "the articles' examples are ```swift blocks")
    }

    /// What the DocC articles' fragments assume exists.
    private static let snippetContext = """
        @_exported import AFNetworking
        @_exported import Foundation
        @_exported import Logging
        #if canImport(FoundationNetworking)
        @_exported import FoundationNetworking
        #endif

        public let manager = HTTPRequestOperationManager(baseURL: URL(string: "https://api.example.org/v1")!)
        public let api = HTTPSessionManager(baseURL: URL(string: "https://api.example.org/v1")!)
        public let operation = HTTPRequestOperation(request: URLRequest(url: URL(string: "https://api.example.org/v1/items")!))
        public let urls = [URL(string: "https://example.org/a")!, URL(string: "https://example.org/b")!]
        public let url = URL(string: "https://example.org/a")!
        public let statusURL = URL(string: "https://example.org/status")!
        public let isoURL = URL(string: "https://example.org/big.iso")!
        public let request = URLRequest(url: URL(string: "https://example.org/a")!)
        public let queue = OperationQueue()
        public let callbacks = DispatchQueue(label: "callbacks")
        public let operations = [HTTPRequestOperation(request: URLRequest(url: URL(string: "https://example.org/a")!))]
        public let download = HTTPRequestOperation(request: URLRequest(url: URL(string: "https://example.org/big.iso")!))
        public let sessionManager = URLSessionManager(sessionConfiguration: .default)
        public let searchManager = HTTPRequestOperationManager(baseURL: URL(string: "https://search.internal/v2")!)
        public let billingManager = HTTPRequestOperationManager(baseURL: URL(string: "https://billing.internal/v1")!)
        public let serializer = HTTPRequestSerializer()
        public let policy = SecurityPolicy.default()
        public let leafDER = Data(), intermediateDER = Data(), rootDER = Data(), daemonCA = Data()
        public let logger = Logger(label: "snippets")
        """

    /// Compiles `snippetContext` into a module `DocSnippetContext`; returns the directory holding it.
    private func buildSnippetContext(in scratch: URL) throws -> URL {
        let directory = scratch.appendingPathComponent("DocSnippetContext")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data(Self.snippetContext.utf8).write(to: directory.appendingPathComponent("Context.swift"))
        let (swiftc, flags) = try compiler()
        let arguments = flags + ["-module-cache-path", scratch.appendingPathComponent("ModuleCache").path,
                                 "-parse-as-library", "-emit-module", "-module-name", "DocSnippetContext",
                                 "-emit-module-path", directory.appendingPathComponent("DocSnippetContext.swiftmodule").path,
                                 "Context.swift"]
        let result = try Self.run(swiftc, arguments, in: directory, timeout: Self.timeout)
        guard case .exited(0, _) = result else {
            throw XCTSkip("the snippet context did not compile: \(result)")
        }
        return directory
    }

    /// swiftc and the flags that find the package's modules, or a failure saying what is missing.
    private func compiler() throws -> (URL, [String]) {
        guard let build = Self.buildDirectory() else {
            XCTFail("""
                no AFNetworking.swiftmodule next to the test bundle (\(Bundle(for: Self.self).bundleURL.path)); \
                run `swift build --build-tests` first
                """)
            throw XCTSkip("no build directory")
        }
        guard let swiftc = Self.swiftc() else {
            XCTFail("no swiftc: put the Swift toolchain on the PATH or set SWIFTC")
            throw XCTSkip("no swiftc")
        }
        // Warnings are errors: in Swift 6 mode a data race through a
        // `@preconcurrency` block is only a warning, and a snippet must not teach one.
        return (swiftc, ["-warnings-as-errors", "-swift-version", "6"] + build.flags)
    }

    private func withScratchDirectory(_ body: (URL) throws -> Void) throws {
        let scratch = FileManager.default.temporaryDirectory
            .appendingPathComponent("doc-snippets-\(ProcessInfo.processInfo.processIdentifier)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        try body(scratch)
    }

    /// Type-checks each snippet as the `main.swift` of a directory of its own.
    private func typeCheck(_ snippets: [ReadmeSnippets.Snippet], of file: String, extraFlags: [String] = [],
                           scratch: URL? = nil) throws {
        guard let scratch else {
            return try withScratchDirectory { try typeCheck(snippets, of: file, extraFlags: extraFlags, scratch: $0) }
        }
        let (swiftc, flags) = try compiler()
        // `-emit-sil`, not `-typecheck`: the checks Swift 6 makes on SIL —
        // region-based isolation ("sending 'x' risks causing data races"),
        // definite initialization, noncopyable values, unreachable code — run
        // only once SIL is generated, so a snippet that type-checks can still
        // fail to build. It costs more per snippet than `-typecheck` (SILGen
        // and the mandatory passes run, and the imported modules' inlinable
        // code is deserialized), but nothing is optimized and no object file
        // is written. One module cache for all snippets: only the first run fills it.
        let arguments = ["-emit-sil", "-o", "/dev/null", "-module-cache-path", scratch.appendingPathComponent("ModuleCache").path]
            + flags + extraFlags
        // One at a time: each run is short, and the machine may have two cores.
        for snippet in snippets {
            let directory = scratch.appendingPathComponent("\(file)-line-\(snippet.line)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try Data(snippet.source.utf8).write(to: directory.appendingPathComponent("main.swift"))
            // A program with an `@main` type has no top-level code.
            let library = snippet.source.contains("\n@main") ? ["-parse-as-library"] : []
            let result = try Self.run(swiftc, arguments + library + ["main.swift"], in: directory, timeout: Self.timeout)
            switch result {
            case .exited(0, _):
                break
            case .exited(let status, let output):
                XCTFail("\(file):\(snippet.line): the snippet does not compile (swiftc exit status \(status)):\n\(output)\n"
                        + "--- main.swift ---\n\(Self.numbered(snippet.source))")
            case .timedOut(let output):
                XCTFail("\(file):\(snippet.line): swiftc did not finish within \(Int(Self.timeout)) s:\n\(output)")
            }
        }
    }

    // MARK: - The extraction rules

    func testBlocksAreSplitAppendedAndOtherFencesIgnored() throws {
        let markdown = """
            # Title

            ```swift
            let a = 1
            ```

            Text.

            <!-- snippet: continues -->
            ```swift
            print(a)
            ```

            ```sh
            make test
            ```

            ```swift
            let b = 2
            ```
            """
        let snippets = try ReadmeSnippets.extract(from: markdown)
        XCTAssertEqual(snippets.map(\.line), [3, 18])
        XCTAssertEqual(snippets.map(\.source), ["let a = 1\nprint(a)\n", "let b = 2\n"])
    }

    func testABlockAfterTheSkipMarkerIsNotCollected() throws {
        let markdown = "```swift\nlet a = 1\n```\n\n<!-- snippet: not checked -->\n```swift\napp.get()\n```\n```swift\nlet b = 2\n```\n"
        XCTAssertEqual(try ReadmeSnippets.extract(from: markdown).map(\.source), ["let a = 1\n", "let b = 2\n"])
        XCTAssertThrowsError(try ReadmeSnippets.extract(from: "<!-- snippet: not checked -->\nText.\n```swift\nlet a = 1\n```\n"))
    }

    func testAContinuationWithoutABlockBeforeItIsAnError() {
        XCTAssertThrowsError(try ReadmeSnippets.extract(from: "<!-- snippet: continues -->\n```swift\nlet a = 1\n```\n"))
    }

    func testAMarkerThatIsNotFollowedByASwiftBlockIsAnError() {
        XCTAssertThrowsError(try ReadmeSnippets.extract(from: "```swift\nlet a = 1\n```\n<!-- snippet: continues -->\nText.\n"))
    }

    func testAnUnclosedBlockIsAnError() {
        XCTAssertThrowsError(try ReadmeSnippets.extract(from: "```swift\nlet a = 1\n"))
    }

    // MARK: - Where things are

    /// Tests/AFNetworkingTests/Documentation/ → the repository root.
    private static var repositoryRoot: URL {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent()   // Documentation
            .deletingLastPathComponent()   // AFNetworkingTests
            .deletingLastPathComponent()   // Tests
            .deletingLastPathComponent()
    }

    /// The build products the tests were built with: `.build/<triple>/<config>`,
    /// which holds the test bundle, `Modules/` and the generated module maps
    /// of the C targets (`<Target>.build/module.modulemap`).
    private static func buildDirectory() -> (directory: URL, flags: [String])? {
        let bundle = Bundle(for: ReadmeSnippetTests.self).bundleURL
        var candidates = [bundle.deletingLastPathComponent(), bundle]
        if let executable = Bundle.main.executableURL {
            candidates.append(executable.deletingLastPathComponent())
        }
        let files = FileManager.default
        for directory in candidates {
            // SwiftPM 6 keeps module files in Modules/, older versions next to the products.
            guard let modules = [directory.appendingPathComponent("Modules"), directory].first(where: {
                files.fileExists(atPath: $0.appendingPathComponent("AFNetworking.swiftmodule").path)
            }) else { continue }
            var flags = ["-I", modules.path]
            // The AFNetworking module imports the package's C shims (CAFCurl,
            // CAFOpenSSL, CAFSystem), whose module maps SwiftPM generates here.
            let entries = (try? files.contentsOfDirectory(atPath: directory.path)) ?? []
            for entry in entries.sorted() where entry.hasSuffix(".build") {
                let map = directory.appendingPathComponent(entry).appendingPathComponent("module.modulemap")
                if files.fileExists(atPath: map.path) { flags += ["-Xcc", "-fmodule-map-file=\(map.path)"] }
            }
            return (directory, flags)
        }
        return nil
    }

    /// `SWIFTC`, else `swiftc` on the PATH, else the toolchain's usual place.
    private static func swiftc() -> URL? {
        let environment = ProcessInfo.processInfo.environment
        var candidates: [String] = []
        if let explicit = environment["SWIFTC"], !explicit.isEmpty { candidates.append(explicit) }
        for directory in (environment["PATH"] ?? "").split(separator: ":") where !directory.isEmpty {
            candidates.append("\(directory)/swiftc")
        }
        candidates.append("/opt/swift/usr/bin/swiftc")
        candidates.append("/usr/bin/swiftc")
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }.map { URL(fileURLWithPath: $0) }
    }

    // MARK: - Running swiftc

    private enum RunResult {
        case exited(Int32, String)
        case timedOut(String)
    }

    /// Runs `executable` in `directory`, output (both streams) to a file so a
    /// long error list cannot fill a pipe, stopped after `timeout` seconds.
    private static func run(_ executable: URL, _ arguments: [String], in directory: URL, timeout: TimeInterval) throws -> RunResult {
        let log = directory.appendingPathComponent("swiftc.log")
        try Data().write(to: log)
        let output = try FileHandle(forWritingTo: log)
        defer { try? output.close() }
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.currentDirectoryURL = directory
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = output
        process.standardError = output
        let exited = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in exited.signal() }
        try Fixtures.launch(process)
        let timedOut = exited.wait(timeout: .now() + timeout) == .timedOut
        if timedOut {
            process.terminate()
            if exited.wait(timeout: .now() + 10) == .timedOut { kill(process.processIdentifier, SIGKILL) }
        }
        let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        return timedOut ? .timedOut(text) : .exited(process.terminationStatus, text)
    }

    private static func numbered(_ source: String) -> String {
        source.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            .map { String(format: "%3d  ", $0.offset + 1) + $0.element }
            .joined(separator: "\n")
    }
}

/// The README's Swift programs.
enum ReadmeSnippets {
    struct Snippet: Equatable {
        /// The README line of the first block's opening fence (1-based).
        var line: Int
        var source: String
    }

    struct Malformed: Error, CustomStringConvertible {
        var line: Int
        var reason: String
        var description: String { "README.md:\(line): \(reason)" }
    }

    static let continuationMarker = "<!-- snippet: continues -->"
    /// Right before a ```swift block that needs what the package does not
    /// have (another framework, such as Vapor): the block is not checked.
    static let skipMarker = "<!-- snippet: not checked -->"

    static func extract(from markdown: String) throws -> [Snippet] {
        var snippets: [Snippet] = []
        var fence: (line: Int, isSwift: Bool, continues: Bool)?
        var body = ""
        var pendingMarker: Int?   // the line of a marker waiting for its block
        var pendingSkip: Int?     // the line of a skip marker waiting for its block
        let lines = markdown.split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.hasSuffix("\r") ? String($0.dropLast()) : String($0) }
        for (index, line) in lines.enumerated() {
            let number = index + 1
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if let open = fence {
                guard trimmed.hasPrefix("```") else {
                    if open.isSwift { body += line + "\n" }
                    continue
                }
                if open.isSwift {
                    if open.continues {
                        snippets[snippets.count - 1].source += body
                    } else {
                        snippets.append(Snippet(line: open.line, source: body))
                    }
                }
                fence = nil
                continue
            }
            if trimmed.hasPrefix("```") {
                let info = trimmed.dropFirst(3).split(separator: " ").first.map(String.init) ?? ""
                if let skip = pendingSkip {
                    guard info == "swift", pendingMarker == nil else {
                        throw Malformed(line: skip, reason: "\(skipMarker) must come right before a ```swift block")
                    }
                    fence = (number, false, false)   // read past it, collect nothing
                    pendingSkip = nil
                    continue
                }
                let isSwift = info == "swift"
                if pendingMarker != nil, !isSwift {
                    throw Malformed(line: number, reason: "\(continuationMarker) must come right before a ```swift block")
                }
                if pendingMarker != nil, snippets.isEmpty {
                    throw Malformed(line: number, reason: "a continued block needs a ```swift block before it")
                }
                fence = (number, isSwift, pendingMarker != nil)
                pendingMarker = nil
                body = ""
                continue
            }
            if trimmed == continuationMarker {
                pendingMarker = number
            } else if trimmed == skipMarker {
                pendingSkip = number
            } else if !trimmed.isEmpty, let marker = pendingSkip {
                throw Malformed(line: marker, reason: "\(skipMarker) must come right before a ```swift block")
            } else if !trimmed.isEmpty, let marker = pendingMarker {
                throw Malformed(line: marker, reason: "\(continuationMarker) must come right before a ```swift block")
            }
        }
        if let open = fence { throw Malformed(line: open.line, reason: "the block is not closed") }
        if let marker = pendingMarker {
            throw Malformed(line: marker, reason: "\(continuationMarker) must come right before a ```swift block")
        }
        return snippets
    }
}
