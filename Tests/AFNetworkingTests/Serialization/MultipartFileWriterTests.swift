import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import AFNetworking

/// `request(withMultipartForm:writingStreamContentsToFile:completionHandler:)`
/// writes to a temporary file beside the destination and renames it over the
/// destination once the whole body is written. It opened the destination
/// itself, truncating an existing file first, and a copy that failed left a
/// partial body there.
final class MultipartFileWriterTests: MultipartTestCase {

    /// Runs the copy of `request`'s body to `target` and waits (bounded) for its handler.
    private func writeBody(of request: URLRequest, to target: URL) -> Error? {
        let done = expectation(description: "written")
        let writeError = Locked<Error?>(nil)
        _ = serializer.request(withMultipartForm: request, writingStreamContentsToFile: target) { error in
            writeError.value = error
            done.fulfill()
        }
        wait(for: [done], timeout: 10)
        return writeError.value
    }

    private func entries(of folder: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
    }

    func testAFailedCopyLeavesTheDestinationUnchangedAndNoTemporaryFile() throws {
        let part = directory.appendingPathComponent("part.bin")
        try Data(repeating: 4, count: 100_000).write(to: part)
        let request = try serializer.multipartFormRequest(withMethod: "POST", urlString: "http://example.com/upload",
                                                          parameters: ["a": "b"]) { form in
            try form.appendPart(withFileURL: part, name: "f")
        }
        try FileManager.default.removeItem(at: part)
        let target = directory.appendingPathComponent("body.out")
        let previous = Data("the previous contents".utf8)
        try previous.write(to: target)

        XCTAssertNotNil(writeBody(of: request, to: target), "the part's file is gone")
        XCTAssertEqual(try Data(contentsOf: target), previous, "the destination is as it was")
        XCTAssertEqual(try entries(of: directory), ["body.out"], "no temporary file is left")
    }

    func testAFailedCopyCreatesNoDestination() throws {
        let part = directory.appendingPathComponent("part.bin")
        try Data(repeating: 4, count: 10).write(to: part)
        let request = try serializer.multipartFormRequest(withMethod: "POST", urlString: "http://example.com/upload", parameters: nil) { form in
            try form.appendPart(withFileURL: part, name: "f")
        }
        // A file that grew fails the body stream (its part would be cut short).
        try Data(repeating: 4, count: 20).write(to: part)
        let target = directory.appendingPathComponent("body.out")
        let error = writeBody(of: request, to: target).map { $0 as NSError }
        XCTAssertEqual(error?.code, NSURLErrorRequestBodyStreamExhausted)
        XCTAssertFalse(FileManager.default.fileExists(atPath: target.path))
        XCTAssertEqual(try entries(of: directory), ["part.bin"])
    }

    func testASuccessfulCopyReplacesALongerFileWhole() throws {
        let request = try serializer.multipartFormRequest(withMethod: "POST", urlString: "http://example.com/upload", parameters: nil) { form in
            form.appendPart(withFileData: Data(repeating: 1, count: 100), name: "d", fileName: "d.bin", mimeType: "x/y")
        }
        let target = directory.appendingPathComponent("body.out")
        try Data(repeating: 9, count: 1_000_000).write(to: target)
        XCTAssertNil(writeBody(of: request, to: target))
        let written = try Data(contentsOf: target)
        XCTAssertEqual(String(written.count), request.value(forHTTPHeaderField: "Content-Length"), "nothing of the old file remains")
        XCTAssertFalse(written.contains(9))
        XCTAssertEqual(try entries(of: directory), ["body.out"])
    }

    /// A destination that cannot be replaced (a directory, a missing folder)
    /// is an error that touches nothing.
    func testADestinationThatCannotBeWrittenIsAnErrorThatTouchesNothing() throws {
        let request = try serializer.multipartFormRequest(withMethod: "POST", urlString: "http://example.com/upload", parameters: nil) { form in
            form.appendPart(withForm: Data("v".utf8), name: "a")
        }
        let folder = directory.appendingPathComponent("folder")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data("inside".utf8).write(to: folder.appendingPathComponent("kept.txt"))

        let intoFolder = writeBody(of: request, to: folder).map { $0 as NSError }
        XCTAssertEqual(intoFolder?.domain, AFURLRequestSerializationErrorDomain)
        XCTAssertEqual(intoFolder?.code, NSURLErrorCannotWriteToFile)
        XCTAssertEqual(try entries(of: directory), ["folder"], "no temporary file is left")
        XCTAssertEqual(try entries(of: folder), ["kept.txt"])

        let missing = directory.appendingPathComponent("missing/body.out")
        let intoNowhere = writeBody(of: request, to: missing).map { $0 as NSError }
        XCTAssertEqual(intoNowhere?.code, NSURLErrorCannotWriteToFile)
        XCTAssertEqual(try entries(of: directory), ["folder"])
    }
}
