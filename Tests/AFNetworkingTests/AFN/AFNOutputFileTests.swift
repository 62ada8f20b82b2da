import Foundation
import XCTest

/// `afn get -o PATH` and `afn download -o PATH` on a real filesystem: symlinks
/// are written through, a FIFO stays a FIFO, a directory is never replaced or
/// deleted, an existing file survives a failed request and `-f`, and an output
/// that cannot be written exits 23. Everything lives in a temporary directory
/// the test makes (no system device node is ever touched).
final class AFNOutputFileTests: XCTestCase {
    private var server: ScriptedServer!
    private var directory: URL!
    private let body = Data(repeating: UInt8(ascii: "b"), count: 1000)

    override func setUpWithError() throws {
        server = try ScriptedServer()
        server.respond("/body", headers: [("Content-Type", "application/octet-stream")], body: body)
        server.respond("/empty")
        server.respond("/missing", status: 404, headers: [("Content-Type", "text/plain")], body: Data("not here".utf8))
        server.respond("/big", body: Data(repeating: UInt8(ascii: "g"), count: 256 << 10))
        // The connection drops before any byte of a response.
        server.route("/drop") { _ in [.close] }
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("afn-output-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDown() {
        server?.shutdown()
        if let directory { try? FileManager.default.removeItem(at: directory) }
    }

    private func url(_ path: String) -> String { server.baseURL.absoluteString + path }
    private func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    private func fileType(_ path: String) -> mode_t? {
        var info = stat()
        return lstat(path, &info) == 0 ? info.st_mode & S_IFMT : nil
    }

    func testGetWritesThroughASymlinkToItsTarget() throws {
        let target = path("target"), link = path("link")
        try Data("old".utf8).write(to: URL(fileURLWithPath: target))
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        let run = try AFNTool.run(["get", "-o", link, url("/body")])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(fileType(link), S_IFLNK, "the link is still a link")
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: target)), body, "the body went to the link's target")
    }

    func testGetWritesIntoAFIFOWithoutReplacingIt() throws {
        let fifo = path("fifo")
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        // The read end is open before afn runs, so its open for writing does not block;
        // the body (1000 bytes) fits in the pipe's buffer.
        let reader = open(fifo, O_RDONLY | O_NONBLOCK)
        XCTAssertGreaterThanOrEqual(reader, 0)
        defer { close(reader) }
        let run = try AFNTool.run(["get", "-o", fifo, url("/body")])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(fileType(fifo), S_IFIFO, "the FIFO was not replaced by a regular file")
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = read(reader, &buffer, buffer.count)
        XCTAssertEqual(count, body.count)
        XCTAssertEqual(Data(buffer.prefix(max(count, 0))), body)
    }

    func testGetToADirectoryIsAUsageErrorThatLeavesItAlone() throws {
        let folder = path("folder")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try Data("keep".utf8).write(to: URL(fileURLWithPath: folder + "/inside.txt"))
        let run = try AFNTool.run(["get", "-o", folder, url("/body")])
        XCTAssertEqual(run.status, 64, run.stderr)
        XCTAssertTrue(run.stderr.contains("is a directory"), run.stderr)
        XCTAssertEqual(fileType(folder), S_IFDIR)
        XCTAssertEqual(try String(contentsOfFile: folder + "/inside.txt", encoding: .utf8), "keep")
        XCTAssertEqual(server.requests.count, 0, "refused before any request")
    }

    func testDownloadToADirectoryIsAUsageErrorThatDeletesNothing() throws {
        let folder = path("folder")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try Data("keep".utf8).write(to: URL(fileURLWithPath: folder + "/inside.txt"))
        let run = try AFNTool.run(["download", "-o", folder, url("/body")])
        XCTAssertEqual(run.status, 64, run.stderr)
        XCTAssertTrue(run.stderr.contains("is a directory"), run.stderr)
        XCTAssertEqual(fileType(folder), S_IFDIR)
        XCTAssertEqual(try String(contentsOfFile: folder + "/inside.txt", encoding: .utf8), "keep")
    }

    func testAnExistingFileIsLeftAsItWasWhenNoByteArrives() throws {
        let file = path("existing")
        try Data("precious".utf8).write(to: URL(fileURLWithPath: file))
        let run = try AFNTool.run(["get", "-o", file, url("/drop")])
        XCTAssertNotEqual(run.status, 0, run.stderr)
        XCTAssertEqual(try String(contentsOfFile: file, encoding: .utf8), "precious")
    }

    func testFailLeavesAnExistingFileAsItWas() throws {
        let file = path("existing")
        try Data("precious".utf8).write(to: URL(fileURLWithPath: file))
        let run = try AFNTool.run(["get", "-f", "-o", file, url("/missing")])
        XCTAssertEqual(run.status, 22, run.stderr)
        XCTAssertEqual(try String(contentsOfFile: file, encoding: .utf8), "precious", "the 404's body was not written, the file not removed")
        // With -f and no file before the run, none is made.
        let fresh = path("fresh")
        XCTAssertEqual(try AFNTool.run(["get", "-f", "-o", fresh, url("/missing")]).status, 22)
        XCTAssertNil(fileType(fresh))
    }

    func testASuccessfulEmptyBodyStillMakesTheFile() throws {
        let file = path("existing")
        try Data("old".utf8).write(to: URL(fileURLWithPath: file))
        XCTAssertEqual(try AFNTool.run(["get", "-o", file, url("/empty")]).status, 0)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: file)), Data())
        let fresh = path("fresh")
        XCTAssertEqual(try AFNTool.run(["get", "-o", fresh, url("/empty")]).status, 0)
        XCTAssertEqual(fileType(fresh), S_IFREG)
    }

    func testAnOutputThatCannotBeOpenedExits23() throws {
        let run = try AFNTool.run(["get", "-o", path("no-such-directory/file"), url("/body")])
        XCTAssertEqual(run.status, 23, run.stderr)
        XCTAssertTrue(run.stderr.contains("no-such-directory/file"), run.stderr)
    }

    /// A FIFO whose reader leaves mid-body: the next write fails with EPIPE
    /// and afn exits 23, as curl does; it does not die of SIGPIPE.
    func testAFIFOWhoseReaderLeftExits23() throws {
        let fifo = path("fifo")
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        let reader = open(fifo, O_RDONLY | O_NONBLOCK)
        XCTAssertGreaterThanOrEqual(reader, 0)
        // Once afn has written into the FIFO (256 KiB do not fit in it), the reader takes one byte and leaves.
        let left = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            var byte: UInt8 = 0
            let deadline = Date().addingTimeInterval(20)
            while read(reader, &byte, 1) != 1 && Date() < deadline { usleep(10_000) }
            close(reader)
            left.signal()
        }
        let run = try AFNTool.run(["get", "-o", fifo, url("/big")], timeout: 30)
        left.wait()
        XCTAssertEqual(run.status, 23, "not killed by SIGPIPE: \(run.stderr)")
        XCTAssertTrue(run.stderr.contains("cannot write"), run.stderr)
        XCTAssertEqual(fileType(fifo), S_IFIFO)
    }

    /// stdout a pipe whose reader leaves after one byte (`| head -c 1`): exit
    /// 23 with a message, not death by SIGPIPE (the shell's 141).
    func testAStdoutReaderThatLeavesMakesTheStatus23() throws {
        let script = "{ \"$0\" \"$@\"; echo \"afn-status $?\" >&2; } | head -c 1 >/dev/null"
        let run = try AFNTool.run(["get", url("/big")], timeout: 30, shell: script)
        XCTAssertTrue(run.stderr.contains("afn-status 23"), run.stderr)
        XCTAssertTrue(run.stderr.contains("afn: cannot write the output"), run.stderr)
    }

    func testAFailedWriteExits23() throws {
        // A file-size limit of one 1 KiB block makes the write of a 256 KiB body fail (EFBIG).
        let file = path("limited")
        let run = try AFNTool.run(["get", "-o", file, url("/big")], shell: "ulimit -f 1 && exec \"$0\" \"$@\"")
        XCTAssertEqual(run.status, 23, run.stderr)
        XCTAssertTrue(run.stderr.contains("cannot write"), run.stderr)
    }
}
