@testable import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// What a resumed download does with each kind of answer.
final class ResumeTests: OperationTestCase {
    private let body = Data((0..<40_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })

    /// Serves the first 10,000 bytes, then stalls, so the test can pause;
    /// ranged requests get `answer`.
    private func serve(answer: @escaping @Sendable (Int) -> [ScriptedServer.Step]) {
        let body = self.body
        server.route("/file") { request in
            if let range = request.headers.first(name: "range"), let start = Int(range.dropFirst(6).dropLast()) {
                return answer(start)
            }
            return [.head(status: 200, headers: [("Content-Length", "\(body.count)"), ("ETag", "\"e1\"")]),
                    .body(body[0..<10_000]), .wait(30)]
        }
    }

    private func pausedOperation() -> (HTTPRequestOperation, () -> Outcome) {
        let operation = HTTPRequestOperation(request: request("/file"))
        let outcome = Locked(Outcome())
        let paused = Locked(false)
        operation.setDownloadProgressBlock { [weak operation] _, total, _ in
            if total >= 10_000 && paused.setOnce() { operation?.pause() }
        }
        record(operation, into: outcome)
        operation.start()
        XCTAssertTrue(spin { operation.isPaused })
        return (operation, { [unowned self] in
            operation.resume()
            XCTAssertTrue(self.spin { outcome.value.calls > 0 && operation.isFinished })
            return outcome.value
        })
    }

    func testA206FromTheOffsetAppends() {
        let body = self.body
        serve { start in
            [.head(status: 206, headers: [("Content-Length", "\(body.count - start)"),
                                          ("Content-Range", "bytes \(start)-\(body.count - 1)/\(body.count)")]),
             .body(body[start...]), .end]
        }
        let (operation, resume) = pausedOperation()
        XCTAssertNil(resume().error)
        XCTAssertEqual(operation.responseData, body)
    }

    func testA200RestartsTheBodyInsteadOfAppending() {
        let fresh = Data(repeating: 9, count: 25_000)
        serve { _ in [.head(status: 200, headers: [("Content-Length", "\(fresh.count)")]), .body(fresh), .end] }
        let (operation, resume) = pausedOperation()
        XCTAssertNil(resume().error)
        XCTAssertEqual(operation.responseData, fresh)
    }

    func testA206AtTheWrongOffsetFailsCleanly() {
        let body = self.body
        serve { _ in
            [.head(status: 206, headers: [("Content-Length", "\(body.count - 5_000)"),
                                          ("Content-Range", "bytes 5000-\(body.count - 1)/\(body.count)")]),
             .body(body[5_000...]), .end]
        }
        let (_, resume) = pausedOperation()
        let outcome = resume()
        XCTAssertEqual(outcome.calls, 1)
        XCTAssertEqual(outcome.error?.domain, NSURLErrorDomain)
        XCTAssertEqual(outcome.error?.code, NSURLErrorBadServerResponse)
        XCTAssertTrue(outcome.error?.localizedDescription.contains("resumed at byte 5000") ?? false, "\(String(describing: outcome.error))")
    }

    /// A server (or proxy) that ignores If-Range answers from a changed
    /// entity: its 206 is refused, never spliced onto the old bytes.
    func testA206OfAnotherEntityIsRefused() {
        let body = self.body
        serve { start in
            [.head(status: 206, headers: [("Content-Length", "\(body.count - start)"), ("ETag", "\"e2\""),
                                          ("Content-Range", "bytes \(start)-\(body.count - 1)/\(body.count)")]),
             .body(body[start...]), .end]
        }
        let (operation, resume) = pausedOperation()
        let outcome = resume()
        XCTAssertEqual(outcome.error?.code, NSURLErrorBadServerResponse)
        XCTAssertTrue(outcome.error?.localizedDescription.contains("changed") ?? false, "\(String(describing: outcome.error))")
        XCTAssertEqual(server.requests.last?.headers.first(name: "if-range"), "\"e1\"")
        XCTAssertNotEqual(operation.responseData, body)
    }

    /// A 206 that stops before the end of the entity it names is not the rest of it.
    func testAShort206IsRefused() {
        let body = self.body
        serve { start in
            [.head(status: 206, headers: [("Content-Length", "500"), ("Content-Range", "bytes \(start)-\(start + 499)/\(body.count)")]),
             .body(body[start..<(start + 500)]), .end]
        }
        let (_, resume) = pausedOperation()
        let outcome = resume()
        XCTAssertEqual(outcome.error?.code, NSURLErrorBadServerResponse)
        XCTAssertTrue(outcome.error?.localizedDescription.contains("not the rest") ?? false, "\(String(describing: outcome.error))")
    }

    /// The body of a 206 must fill the range its Content-Range names: more
    /// bytes (a longer Content-Length, or a close-delimited body past it),
    /// fewer (a shorter Content-Length), or an unknown total with too many,
    /// all fail rather than leave a body that is not the entity.
    func testA206WhoseBodyDoesNotFillItsRangeFails() {
        let body = self.body
        let cases: [(String, @Sendable (Int) -> [ScriptedServer.Step])] = [
            ("longer", { start in
                let extra = body[start...] + Data(repeating: 1, count: 3_000)
                return [.head(status: 206, headers: [("Content-Length", "\(extra.count)"),
                                                     ("Content-Range", "bytes \(start)-\(body.count - 1)/\(body.count)")]),
                        .body(extra), .end]
            }),
            ("shorter", { start in
                [.head(status: 206, headers: [("Content-Length", "20"), ("Content-Range", "bytes \(start)-\(body.count - 1)/\(body.count)")]),
                 .body(body[start..<(start + 20)]), .end]
            }),
            ("unknown total, longer", { start in
                let extra = body[start...] + Data(repeating: 1, count: 3_000)
                return [.head(status: 206, headers: [("Content-Length", "\(extra.count)"),
                                                     ("Content-Range", "bytes \(start)-\(body.count - 1)/*")]),
                        .body(extra), .end]
            }),
        ]
        for (name, answer) in cases {
            serve(answer: answer)
            let (operation, resume) = pausedOperation()
            let outcome = resume()
            XCTAssertEqual(outcome.error?.code, NSURLErrorBadServerResponse, name)
            XCTAssertTrue(outcome.error?.localizedDescription.contains("does not match its range") ?? false,
                          "\(name): \(String(describing: outcome.error))")
            XCTAssertLessThanOrEqual(operation.responseData?.count ?? 0, body.count, "\(name): nothing past the range is kept")
        }
    }

    /// A HEAD asking for a range gets its 206 head only: there is no body to
    /// fill the range with, and that is no failure.
    func testAHEADWithARangeAnsweredWith206Succeeds() {
        server.route("/ranged-head") { _ in
            [.head(status: 206, headers: [("Content-Range", "bytes 100-199/200"), ("Content-Length", "100")]), .end]
        }
        var request = request("/ranged-head", method: "HEAD")
        request.setValue("bytes=100-", forHTTPHeaderField: "Range")
        let operation = HTTPRequestOperation(request: request)
        let outcome = run(operation)
        XCTAssertNil(outcome.error)
        XCTAssertEqual(operation.response?.statusCode, 206)
    }

    /// Without a validator nothing could tell a changed entity apart: the
    /// resume asks for the whole body again (2.7 appended whatever came).
    func testWithoutAValidatorAResumeStartsOver() {
        let body = self.body
        let plainRequests = Locked(0)
        server.route("/file") { request in
            XCTAssertNil(request.headers.first(name: "range"), "no Range without a validator")
            let first = plainRequests.withLock { count -> Bool in
                count += 1
                return count == 1
            }
            if first { return [.head(status: 200, headers: [("Content-Length", "\(body.count)")]), .body(body[0..<10_000]), .wait(30)] }
            return [.head(status: 200, headers: [("Content-Length", "\(body.count)")]), .body(body), .end]
        }
        let (operation, resume) = pausedOperation()
        XCTAssertNil(resume().error)
        XCTAssertEqual(operation.responseData, body)
        XCTAssertEqual(plainRequests.value, 2)
    }

    /// A weak entity tag never matches in If-Range (RFC 9110 §13.1.5): the
    /// date is sent instead, so the resume can continue.
    func testAWeakEntityTagIsNotSentInIfRange() {
        let body = self.body
        let modified = "Sun, 06 Nov 1994 08:49:37 GMT"
        server.route("/file") { request in
            if let range = request.headers.first(name: "range"), let start = Int(range.dropFirst(6).dropLast()) {
                return [.head(status: 206, headers: [("Content-Length", "\(body.count - start)"),
                                                     ("Content-Range", "bytes \(start)-\(body.count - 1)/\(body.count)")]),
                        .body(body[start...]), .end]
            }
            return [.head(status: 200, headers: [("Content-Length", "\(body.count)"), ("ETag", "W/\"w1\""), ("Last-Modified", modified)]),
                    .body(body[0..<10_000]), .wait(30)]
        }
        let (operation, resume) = pausedOperation()
        XCTAssertNil(resume().error)
        XCTAssertEqual(server.requests.last?.headers.first(name: "if-range"), modified)
        XCTAssertEqual(operation.responseData, body)
    }

    func testA416ForAnAlreadyCompleteBodyCompletes() {
        // The whole entity was 10,000 bytes: a ranged request from 10,000 is unsatisfiable.
        let small = body[0..<10_000]
        server.route("/file") { request in
            if request.headers.first(name: "range") != nil {
                return [.head(status: 416, headers: [("Content-Range", "bytes */10000"), ("Content-Length", "0")]), .end]
            }
            // Chunked, so the client cannot tell the body is complete and stays paused.
            return [.head(status: 200, headers: [("Transfer-Encoding", "chunked"), ("ETag", "\"s1\"")]), .body(Data(small)), .wait(30)]
        }
        let operation = HTTPRequestOperation(request: request("/file"))
        let done = Locked(false)
        operation.setCompletionBlockWithSuccess({ _, _ in done.value = true }, failure: { _, _ in done.value = true })
        let paused = Locked(false)
        operation.setDownloadProgressBlock { [weak operation] _, total, _ in
            if total >= 10_000 && paused.setOnce() { operation?.pause() }
        }
        operation.start()
        XCTAssertTrue(spin { operation.isPaused })
        operation.resume()
        XCTAssertTrue(spin { done.value && operation.isFinished })
        XCTAssertNil(operation.error, "\(server.requests.map { ($0.uri, $0.headers.first(name: "range") ?? "-") })")
        XCTAssertEqual(operation.response?.statusCode, 206, "a resumed download completes with a 206, whole here")
        XCTAssertEqual(operation.response?.expectedContentLength, 10_000)
        XCTAssertEqual(operation.responseData, Data(small))
    }

    func testDecisionTable() {
        XCTAssertEqual(ResumeRules.decide(statusCode: 206, contentRange: "bytes 100-199/200", offset: 100), .append)
        XCTAssertEqual(ResumeRules.decide(statusCode: 206, contentRange: "bytes 100-199/*", offset: 100), .append)
        XCTAssertEqual(ResumeRules.decide(statusCode: 206, contentRange: "bytes 100-199/200", offset: 100, ifRange: "\"a\"", etag: "\"a\""), .append)
        XCTAssertEqual(ResumeRules.decide(statusCode: 206, contentRange: "bytes 100-199/200", offset: 100, ifRange: "\"a\""), .append,
                       "a 206 without a tag: the server honoured If-Range")
        for (range, ifRange, etag, modified) in [("bytes 100-150/200", nil, nil, nil), ("items 100-199/200", nil, nil, nil),
                                                 ("bytes 100-199/150", nil, nil, nil), ("bytes 100-99/200", nil, nil, nil),
                                                 ("bytes 100-9223372036854775807/*", nil, nil, nil),
                                                 ("bytes 100-199/200", "\"a\"", "\"b\"", nil),
                                                 ("bytes 100-199/200", "Sun, 06 Nov 1994 08:49:37 GMT", nil, "Mon, 07 Nov 1994 08:49:37 GMT")] as [(String, String?, String?, String?)] {
            if case .fail = ResumeRules.decide(statusCode: 206, contentRange: range, offset: 100, ifRange: ifRange, etag: etag, lastModified: modified) {} else {
                XCTFail("\(range) \(String(describing: etag)) \(String(describing: modified)) was appended")
            }
        }
        XCTAssertEqual(ResumeRules.ifRangeValidator(etag: "W/\"x\"", lastModified: "d"), "d")
        XCTAssertEqual(ResumeRules.ifRangeValidator(etag: "\"x\"", lastModified: "d"), "\"x\"")
        XCTAssertNil(ResumeRules.ifRangeValidator(etag: "W/\"x\"", lastModified: nil))
        XCTAssertEqual(ResumeRules.decide(statusCode: 200, contentRange: nil, offset: 100), .restart)
        XCTAssertEqual(ResumeRules.decide(statusCode: 416, contentRange: "bytes */100", offset: 100), .alreadyComplete)
        XCTAssertEqual(ResumeRules.decide(statusCode: 404, contentRange: nil, offset: 100), .notApplicable)
        if case .fail = ResumeRules.decide(statusCode: 206, contentRange: nil, offset: 100) {} else { XCTFail("206 without Content-Range") }
        if case .fail = ResumeRules.decide(statusCode: 416, contentRange: "bytes */300", offset: 100) {} else { XCTFail("416 with more to come") }
        XCTAssertEqual(ResumeRules.offset(of: URLRequest(url: URL(string: "http://x/")!)), nil)
    }
}
