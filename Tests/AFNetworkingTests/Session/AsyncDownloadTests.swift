@testable import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// The async downloads: progress, resume data on a cancel (in the thrown
/// `URLError`) and on a failure, and `download(resumeFrom:to:progress:)`
/// finishing the file byte for byte; against the scripted server.
final class AsyncDownloadTests: SessionTransferTestCase {
    /// Serves `body` at `path`: a plain request gets the head and the first
    /// `split` bytes, then a stall (or, with `drop`, a closed connection); a
    /// `Range: bytes=N-` request gets the rest as a 206.
    private func serveResumable(_ path: String, body: Data, split: Int, validators: [(String, String)] = [("ETag", "\"v1\"")],
                                drop: Bool = false) {
        server.route(path) { request in
            if let range = request.headers.first(name: "range"), range.hasPrefix("bytes="), range.hasSuffix("-"),
               let start = Int(range.dropFirst(6).dropLast()), start > 0, start < body.count {
                return [.head(status: 206, headers: validators + [("Content-Length", "\(body.count - start)"),
                                                                  ("Content-Range", "bytes \(start)-\(body.count - 1)/\(body.count)")]),
                        .body(body.subdata(in: start..<body.count)), .end]
            }
            let head = ScriptedServer.Step.head(status: 200, headers: validators + [("Content-Length", "\(body.count)")])
            let first = ScriptedServer.Step.body(body.subdata(in: 0..<split))
            return drop ? [head, first, .close] : [head, first, .wait(10), .body(body.subdata(in: split..<body.count)), .end]
        }
    }

    private func makeAsyncManager(_ label: String) -> URLSessionManager {
        let manager = makeManager()
        manager.completionQueue = DispatchQueue(label: label)
        return manager
    }

    /// Starts a download of `path` in a Swift task and cancels that task once
    /// `split` bytes were reported; returns what the call threw.
    private func cancelledDownload(_ manager: URLSessionManager, _ path: String, split: Int, to destination: URL) async throws -> Error? {
        let reached = Locked(false)
        let request = self.request(path)
        let waiter = Task { () -> Error? in
            do {
                _ = try await manager.download(for: request, to: destination) { progress in
                    if progress.completedUnitCount >= Int64(split) { reached.withLock { $0 = true } }
                }
                return nil
            } catch {
                return error
            }
        }
        let deadline = Date().addingTimeInterval(10)
        while !reached.value, Date() < deadline { try await Task.sleep(nanoseconds: 10_000_000) }
        XCTAssertTrue(reached.value, "the first part arrived")
        waiter.cancel()
        return await waiter.value
    }

    func testACancelThrowsResumeDataAndResumingFinishesTheFileByteForByte() async throws {
        let body = pattern(400_000, salt: 11)
        serveResumable("/resumable", body: body, split: 150_000)
        let manager = makeAsyncManager("async-download-resume")
        let destination = temporaryURL("async-resume")
        let error = try await cancelledDownload(manager, "/resumable", split: 150_000, to: destination)
        let urlError = try XCTUnwrap(error as? URLError, "a cancel with resume data throws URLError: \(String(describing: error))")
        XCTAssertEqual(urlError.code, .cancelled)
        let data = try XCTUnwrap(urlError.downloadTaskResumeData)
        let resume = try XCTUnwrap(DownloadResumeData.decode(data))
        XCTAssertTrue(FileManager.default.fileExists(atPath: resume.partialFilePath), "the file the data names is kept")
        XCTAssertEqual(resume.bytesWritten, 150_000)
        XCTAssertFalse(FileManager.default.fileExists(atPath: destination.path), "nothing at the destination yet")

        let fractions = Locked<[Double]>([])
        let response = try await manager.download(resumeFrom: data, to: destination) { progress in
            fractions.withLock { $0.append(progress.fractionCompleted) }
        }
        XCTAssertEqual((response as? HTTPURLResponse)?.statusCode, 206)
        XCTAssertEqual(try Data(contentsOf: destination), body, "the kept part and the rest, byte for byte")
        XCTAssertFalse(FileManager.default.fileExists(atPath: resume.partialFilePath), "moved, not copied")
        let second = try XCTUnwrap(server.requests.filter { $0.uri == "/resumable" }.last)
        XCTAssertEqual(second.headers["Range"], ["bytes=150000-"])
        XCTAssertEqual(second.headers["If-Range"], ["\"v1\""])
        XCTAssertEqual(fractions.value.last ?? 0, 1, accuracy: 0.0001)
    }

    func testAFailureMidTransferCarriesResumeDataThatFinishesTheFile() async throws {
        let body = pattern(300_000, salt: 13)
        serveResumable("/dropped", body: body, split: 120_000, drop: true)
        let manager = makeAsyncManager("async-download-dropped")
        let destination = temporaryURL("async-dropped")
        var thrown: Error?
        do {
            _ = try await manager.download(for: request("/dropped"), to: destination, progress: nil)
        } catch {
            thrown = error
        }
        let error = try XCTUnwrap(thrown as NSError?)
        XCTAssertEqual(error.domain, NSURLErrorDomain)
        XCTAssertNotEqual(error.code, NSURLErrorCancelled)
        let data = try XCTUnwrap(error.userInfo[URLSessionDownloadTaskResumeData] as? Data, "\(error)")
        _ = try await manager.download(resumeFrom: data, to: destination)
        XCTAssertEqual(try Data(contentsOf: destination), body)
    }

    func testProgressCountsTheBytesOfTheWholeFile() async throws {
        let body = pattern(500_000, salt: 14)
        server.respond("/whole", headers: [("ETag", "\"w\"")], body: body)
        let manager = makeAsyncManager("async-download-progress")
        let destination = temporaryURL("async-progress")
        let seen = Locked<[(Int64, Int64)]>([])
        _ = try await manager.download(for: request("/whole"), to: destination) { progress in
            seen.withLock { $0.append((progress.completedUnitCount, progress.totalUnitCount)) }
        }
        let reports = seen.value
        XCTAssertFalse(reports.isEmpty)
        XCTAssertEqual(reports.last?.0, Int64(body.count))
        XCTAssertTrue(reports.allSatisfy { $0.1 == Int64(body.count) }, "the total is the Content-Length")
        XCTAssertEqual(reports.map(\.0), reports.map(\.0).sorted(), "never goes back")
        XCTAssertEqual(try Data(contentsOf: destination), body)
    }

    func testResumeDataThisLibraryDidNotMakeThrowsWithNothingSent() async throws {
        let manager = makeAsyncManager("async-download-junk")
        let destination = temporaryURL("async-junk")
        let sent = server.requests.count
        do {
            _ = try await manager.download(resumeFrom: Data("not resume data".utf8), to: destination)
            XCTFail("junk cannot resume anything")
        } catch {
            XCTAssertEqual((error as NSError).code, NSURLErrorCannotDecodeRawData, "\(error)")
        }
        XCTAssertEqual(server.requests.count, sent)
        XCTAssertFalse(FileManager.default.fileExists(atPath: destination.path))
    }
}
