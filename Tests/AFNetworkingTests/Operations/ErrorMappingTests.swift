@testable import AFNetworking
@_spi(AFNetworkingInternal) import AFNetworkingTransport
import CAFCurl
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// Transport failures surface as NSURLErrorDomain errors with the failing URL.
final class ErrorMappingTests: OperationTestCase {
    private func assertURLError(_ outcome: Outcome, _ code: Int, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(outcome.calls, 1, "failure must run exactly once", file: file, line: line)
        XCTAssertEqual(outcome.error?.domain, NSURLErrorDomain, file: file, line: line)
        XCTAssertEqual(outcome.error?.code, code, "\(String(describing: outcome.error))", file: file, line: line)
        XCTAssertNotNil(outcome.error?.userInfo[NSURLErrorFailingURLErrorKey], file: file, line: line)
    }

    func testSilentServerTimesOutAfterIdleInterval() throws {
        let silent = try RawReplyServer(reply: nil)
        defer { silent.shutdown() }
        var request = URLRequest(url: silent.baseURL.appendingPathComponent("x"))
        request.timeoutInterval = 0.5
        let started = Date()
        let outcome = run(HTTPRequestOperation(request: request))
        assertURLError(outcome, NSURLErrorTimedOut)
        XCTAssertLessThan(Date().timeIntervalSince(started), 5)
    }

    func testTimeoutIsIdleTimeNotTotalTime() {
        // 1.5 s of body in 0.2 s drips against a 0.8 s timeout: never idle that long.
        server.route("/drip") { _ in
            var steps: [ScriptedServer.Step] = [.head(status: 200, headers: [("Content-Length", "8")])]
            for _ in 0..<8 { steps += [.wait(0.2), .body(Data("x".utf8))] }
            return steps + [.end]
        }
        let outcome = run(HTTPRequestOperation(request: request("/drip", timeout: 0.8)))
        XCTAssertNil(outcome.error)
    }

    func testStallMidBodyTimesOut() {
        server.route("/stall") { _ in
            [.head(status: 200, headers: [("Content-Length", "100")]), .body(Data("partial".utf8)), .wait(30)]
        }
        assertURLError(run(HTTPRequestOperation(request: request("/stall", timeout: 0.5))), NSURLErrorTimedOut)
    }

    func testConnectionRefused() {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(Fixtures.refusedPort)/")!)
        request.timeoutInterval = 5
        assertURLError(run(HTTPRequestOperation(request: request)), NSURLErrorCannotConnectToHost)
    }

    func testUnknownHost() {
        // A 64-character label is not a valid DNS name: the resolver rejects it
        // locally, so this test sends nothing off the machine.
        let host = String(repeating: "a", count: 64) + ".invalid"
        var request = URLRequest(url: URL(string: "http://\(host)/")!)
        request.timeoutInterval = 5
        assertURLError(run(HTTPRequestOperation(request: request)), NSURLErrorCannotFindHost)
    }

    func testConnectionDroppedMidBody() {
        server.route("/drop") { _ in
            [.head(status: 200, headers: [("Content-Length", "1000")]), .body(Data(repeating: 1, count: 100)), .wait(0.05), .close]
        }
        assertURLError(run(HTTPRequestOperation(request: request("/drop"))), NSURLErrorNetworkConnectionLost)
    }

    func testEmptyReplyIsConnectionLost() throws {
        server.route("/nothing") { _ in [.close] }
        assertURLError(run(HTTPRequestOperation(request: request("/nothing"))), NSURLErrorNetworkConnectionLost)
    }

    func testGarbageReplyIsBadServerResponse() throws {
        let garbage = try RawReplyServer(reply: Data("SPEAKING GIBBERISH\r\n\r\n".utf8))
        defer { garbage.shutdown() }
        var request = URLRequest(url: garbage.baseURL.appendingPathComponent("x"))
        request.timeoutInterval = 5
        assertURLError(run(HTTPRequestOperation(request: request)), NSURLErrorBadServerResponse)
    }

    func testTooManyRedirects() {
        server.route("/loop") { _ in [.head(status: 302, headers: [("Location", "/loop"), ("Content-Length", "0")]), .end] }
        assertURLError(run(HTTPRequestOperation(request: request("/loop"))), NSURLErrorHTTPTooManyRedirects)
        XCTAssertEqual(server.requests.count, 17)
    }

    func testUnsupportedScheme() {
        var request = URLRequest(url: URL(string: "ftp://127.0.0.1/file")!)
        request.timeoutInterval = 5
        assertURLError(run(HTTPRequestOperation(request: request)), NSURLErrorUnsupportedURL)
    }

    func testRedirectToFileSchemeIsRefused() {
        server.route("/evil") { _ in [.head(status: 302, headers: [("Location", "file:///etc/passwd"), ("Content-Length", "0")]), .end] }
        let (operation, outcome) = get("/evil")
        XCTAssertEqual(outcome.error?.code, NSURLErrorUnsupportedURL)
        XCTAssertNil(operation.responseString?.range(of: "root:"))
    }

    func testFailingOutputStreamFailsWithItsError() {
        server.respond("/body", body: Data(repeating: 1, count: 10_000))
        let operation = HTTPRequestOperation(request: request("/body"))
        // A stream to a directory cannot be opened, so every write fails.
        operation.outputStream = OutputStream(toFileAtPath: "/proc/definitely/not/here", append: false)
        let outcome = run(operation)
        XCTAssertEqual(outcome.calls, 1)
        // The stream's own error (the path does not exist), not some other failure.
        let streamError = operation.outputStream?.streamError as NSError?
        XCTAssertNotNil(streamError, "the stream reports why it failed")
        XCTAssertEqual(outcome.error?.domain, streamError?.domain, "\(String(describing: outcome.error))")
        XCTAssertEqual(outcome.error?.code, streamError?.code, "\(String(describing: outcome.error))")
        XCTAssertNil(operation.responseData, "no body is delivered through a failed stream")
    }

    func testFailingInputStreamFailsAsBodyStreamExhausted() {
        server.respond("/up", body: Data())
        let operation = HTTPRequestOperation(request: request("/up", method: "POST"))
        operation.inputStream = InputStream(fileAtPath: "/proc/definitely/not/here")
        let outcome = run(operation)
        assertURLError(outcome, NSURLErrorRequestBodyStreamExhausted)
    }

    // MARK: Cancellation

    func testCancelBeforeStartFailsWithCancelledOnce() {
        server.respond("/never", body: Data("x".utf8))
        let operation = HTTPRequestOperation(request: request("/never"))
        operation.cancel()
        let outcome = run(operation)
        assertURLError(outcome, NSURLErrorCancelled)
        XCTAssertTrue(operation.isFinished)
        XCTAssertTrue(server.requests.isEmpty, "a cancelled operation sends nothing")
    }

    func testCancelMidBody() {
        server.route("/slow") { _ in
            [.head(status: 200, headers: [("Content-Length", "100000")]), .body(Data(repeating: 1, count: 1000)), .wait(30)]
        }
        let operation = HTTPRequestOperation(request: request("/slow"))
        let outcome = Locked(Outcome())
        let done = expectation(description: "failure")
        record(operation, into: outcome) { done.fulfill() }
        operation.setDownloadProgressBlock { [weak operation] _, _, _ in operation?.cancel() }
        OperationQueue().addOperation(operation)
        wait(for: [done], timeout: 10)
        assertURLError(outcome.value, NSURLErrorCancelled)
        XCTAssertTrue(spin { operation.isFinished })
        XCTAssertTrue(operation.isCancelled)
    }

    // MARK: The table itself

    func testEveryTableRow() {
        let rows: [(CURLcode, Int)] = [
            (CURLE_UNSUPPORTED_PROTOCOL, NSURLErrorUnsupportedURL), (CURLE_URL_MALFORMAT, NSURLErrorBadURL),
            (CURLE_COULDNT_RESOLVE_HOST, NSURLErrorCannotFindHost), (CURLE_COULDNT_RESOLVE_PROXY, NSURLErrorCannotFindHost),
            (CURLE_COULDNT_CONNECT, NSURLErrorCannotConnectToHost), (CURLE_OPERATION_TIMEDOUT, NSURLErrorTimedOut),
            (CURLE_TOO_MANY_REDIRECTS, NSURLErrorHTTPTooManyRedirects), (CURLE_GOT_NOTHING, NSURLErrorNetworkConnectionLost),
            (CURLE_PARTIAL_FILE, NSURLErrorNetworkConnectionLost), (CURLE_RECV_ERROR, NSURLErrorNetworkConnectionLost),
            (CURLE_SEND_ERROR, NSURLErrorNetworkConnectionLost), (CURLE_WEIRD_SERVER_REPLY, NSURLErrorBadServerResponse),
            (CURLE_HTTP2, NSURLErrorBadServerResponse), (CURLE_HTTP2_STREAM, NSURLErrorBadServerResponse),
            (CURLE_BAD_CONTENT_ENCODING, NSURLErrorCannotDecodeContentData), (CURLE_FILESIZE_EXCEEDED, NSURLErrorDataLengthExceedsMaximum),
            (CURLE_SEND_FAIL_REWIND, NSURLErrorRequestBodyStreamExhausted), (CURLE_ABORTED_BY_CALLBACK, NSURLErrorCancelled),
            (CURLE_WRITE_ERROR, NSURLErrorCancelled), (CURLE_SSL_CONNECT_ERROR, NSURLErrorSecureConnectionFailed),
            (CURLE_PEER_FAILED_VERIFICATION, NSURLErrorServerCertificateUntrusted),
            (CURLE_SSL_PINNEDPUBKEYNOTMATCH, NSURLErrorServerCertificateUntrusted), (CURLE_SSL_CIPHER, NSURLErrorSecureConnectionFailed),
            (CURLE_SSL_CERTPROBLEM, NSURLErrorClientCertificateRejected), (CURLE_SSL_CLIENTCERT, NSURLErrorClientCertificateRequired),
            (CURLE_OUT_OF_MEMORY, NSURLErrorCannotLoadFromNetwork),
        ]
        for (curlCode, urlCode) in rows {
            XCTAssertEqual(TransportErrors.urlErrorCode(for: curlCode), urlCode, "CURLcode \(curlCode.rawValue)")
        }
        XCTAssertEqual(TransportErrors.certificateErrorCode(forVerifyResult: 10), NSURLErrorServerCertificateHasBadDate)
        XCTAssertEqual(TransportErrors.certificateErrorCode(forVerifyResult: 18), NSURLErrorServerCertificateHasUnknownRoot)
    }

    func testSelfAbortsNeverMapToUnknown() {
        let url = URL(string: "http://127.0.0.1/")
        for reason in [AbortReason.cancelled, .timedOut] {
            let error = TransportErrors.error(for: CURLE_ABORTED_BY_CALLBACK, abortReason: reason, url: url, curlMessage: nil)
            XCTAssertNotEqual(error.code, NSURLErrorUnknown)
            XCTAssertEqual(error.userInfo[NSURLErrorFailingURLErrorKey] as? URL, url)
        }
    }
}
