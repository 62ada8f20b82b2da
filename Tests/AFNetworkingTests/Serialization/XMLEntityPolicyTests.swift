import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(FoundationXML)
import FoundationXML
#endif
import XCTest

/// A hostile XML server: its documents name a local file (holding a marker) and
/// URLs on a second loopback server that counts every request. Whatever entry
/// point parses them, the marker never shows and the second server sees nothing.
final class XMLEntityPolicyTests: OperationTestCase {
    private var bystander: ScriptedServer!
    private var directory: URL!
    private var secretFile: URL!
    private let marker = "XXE-MARKER-7f3a"

    override func setUpWithError() throws {
        try super.setUpWithError()
        bystander = try ScriptedServer()
        for path in ["/entity", "/param.ent", "/external.dtd"] {
            let body = path == "/entity" ? "REMOTE-\(marker)" : "<!ENTITY leaked 'REMOTE-\(marker)'>"
            bystander.respond(path, headers: [("Content-Type", "application/xml-dtd")], body: Data(body.utf8))
        }
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("xxe-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        secretFile = directory.appendingPathComponent("secret.txt")
        try Data("FILE-\(marker)".utf8).write(to: secretFile)
    }

    override func tearDown() {
        bystander?.shutdown()
        bystander = nil
        if let directory { try? FileManager.default.removeItem(at: directory) }
        super.tearDown()
    }

    /// External general entities (file and http), an external parameter entity,
    /// an external DTD subset, and one internal entity that must still expand.
    private var hostileDocument: Data {
        let remote = bystander.baseURL.absoluteString
        return Data("""
        <?xml version="1.0"?>
        <!DOCTYPE r SYSTEM "\(remote)/external.dtd" [
          <!ENTITY local SYSTEM "\(secretFile.absoluteString)">
          <!ENTITY remote SYSTEM "\(remote)/entity">
          <!ENTITY % param SYSTEM "\(remote)/param.ent">
          %param;
          <!ENTITY inner "internal-ok">
        ]>
        <r><a>&local;</a><b>&remote;</b><c>&inner;</c><d>plain</d></r>
        """.utf8)
    }

    private func serve(_ body: Data, contentType: String = "application/xml") {
        server.respond("/doc", headers: [("Content-Type", contentType)], body: body)
    }

    private func fetch(with serializer: HTTPResponseSerializer) -> Outcome {
        let operation = HTTPRequestOperation(request: request("doc"))
        operation.responseSerializer = serializer
        return run(operation)
    }

    private func assertNothingLeaked(_ text: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertFalse(text.contains(marker), "an external entity was resolved: \(text)", file: file, line: line)
        XCTAssertEqual(bystander.requests.map(\.uri), [], "an external entity or DTD was fetched", file: file, line: line)
    }

    func testDocumentSerializerLoadsNoExternalEntity() throws {
        serve(hostileDocument)
        let outcome = fetch(with: XMLDocumentResponseSerializer())
        XCTAssertNil(outcome.error)
        let document = try XCTUnwrap(outcome.object as? XMLDocument)
        assertNothingLeaked(document.xmlString)
        XCTAssertEqual(document.rootElement()?.elements(forName: "c").first?.stringValue, "internal-ok",
                       "internal entities are substituted as before")
    }

    func testDocumentSerializerIgnoresOptionsAskingForExternalEntities() throws {
        serve(hostileDocument)
        for options: XMLNode.Options in [.nodeLoadExternalEntitiesAlways, .nodeLoadExternalEntitiesSameOriginOnly] {
            let outcome = fetch(with: XMLDocumentResponseSerializer(xmlDocumentOptions: options))
            let document = try XCTUnwrap(outcome.object as? XMLDocument, "\(String(describing: outcome.error))")
            assertNothingLeaked(document.xmlString)
        }
    }

    func testParserSerializerLoadsNoExternalEntity() throws {
        serve(hostileDocument)
        let outcome = fetch(with: XMLParserResponseSerializer())
        let parser = try XCTUnwrap(outcome.object as? XMLParser, "\(String(describing: outcome.error))")
        let collector = TextCollector()
        parser.delegate = collector
        _ = parser.parse()
        assertNothingLeaked(collector.text)
        // (corelibs' XMLParser reports no entity text at all, internal or not.)
        XCTAssertTrue(collector.text.contains("plain"), "the document was parsed: \(collector.text)")
    }

    func testPropertyListSerializerLoadsNoExternalEntity() throws {
        let remote = bystander.baseURL.absoluteString
        serve(Data("""
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist SYSTEM "\(remote)/external.dtd" [
          <!ENTITY local SYSTEM "\(secretFile.absoluteString)">
          <!ENTITY remote SYSTEM "\(remote)/entity">
        ]>
        <plist version="1.0"><array><string>&local;</string><string>&remote;</string></array></plist>
        """.utf8), contentType: "application/x-plist")
        let outcome = fetch(with: PropertyListResponseSerializer())
        // Refusing the document is as good as leaving the entities out.
        assertNothingLeaked("\(outcome.object.map { "\($0)" } ?? "") \(outcome.error.map { "\($0)" } ?? "")")
    }

    /// Collects the characters a parse reports.
    private final class TextCollector: NSObject, XMLParserDelegate {
        var text = ""
        func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }
    }
}
