import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// `AFNetworkingError` (`error.afnetworking`): how every error the library
/// reports is sorted into a `Kind`, with real errors where a server can make
/// them (a 404 through the JSON serializer, a refused connection, a timeout).
final class AFNetworkingErrorTests: OperationTestCase {
    private func urlError(_ code: Int, _ userInfo: [String: Any] = [:]) -> NSError {
        NSError(domain: NSURLErrorDomain, code: code, userInfo: userInfo)
    }

    // MARK: - Transport codes

    func testURLErrorCodesAreClassified() {
        let table: [(Int, AFNetworkingError.Kind)] = [
            (NSURLErrorCancelled, .cancelled),
            (NSURLErrorTimedOut, .timedOut),
            (NSURLErrorCannotFindHost, .cannotFindHost),
            (NSURLErrorDNSLookupFailed, .cannotFindHost),
            (NSURLErrorCannotConnectToHost, .cannotConnect),
            (NSURLErrorNetworkConnectionLost, .connectionLost),
            (NSURLErrorNotConnectedToInternet, .notConnectedToInternet),
            (NSURLErrorSecureConnectionFailed, .tlsFailed),
            (NSURLErrorClientCertificateRequired, .clientCertificateRequired),
            (NSURLErrorClientCertificateRejected, .clientCertificateRejected),
            (NSURLErrorBadServerResponse, .badServerResponse),
            (NSURLErrorZeroByteResource, .badServerResponse),
            (NSURLErrorCannotDecodeContentData, .badServerResponse),
            (NSURLErrorBadURL, .badURL),
            (NSURLErrorUnsupportedURL, .badURL),
            (NSURLErrorHTTPTooManyRedirects, .tooManyRedirects),
            (NSURLErrorFileDoesNotExist, .file),
            (NSURLErrorCannotCreateFile, .file),
            (NSURLErrorCannotWriteToFile, .file),
            (NSURLErrorCannotOpenFile, .file),
            (NSURLErrorCannotMoveFile, .file),
            (NSURLErrorCannotRemoveFile, .file),
            (NSURLErrorNoPermissionsToReadFile, .file),
            (NSURLErrorUnknown, .other),
            (NSURLErrorRequestBodyStreamExhausted, .other),
            (NSURLErrorUserAuthenticationRequired, .other),
        ]
        for (code, kind) in table {
            XCTAssertEqual(urlError(code).afnetworking.kind, kind, "NSURLError code \(code)")
        }
    }

    func testServerCertificateErrorsAreTLSRejectionsWithTheirReason() {
        for code in [NSURLErrorServerCertificateUntrusted, NSURLErrorServerCertificateHasBadDate,
                     NSURLErrorServerCertificateHasUnknownRoot, NSURLErrorServerCertificateNotYetValid] {
            XCTAssertEqual(urlError(code).afnetworking.kind, .tlsRejected(nil), "code \(code) without a reason")
        }
        let pinned = urlError(NSURLErrorServerCertificateUntrusted,
                              [AFNetworkingSecurityPolicyFailureReasonErrorKey: SecurityPolicyFailureReason.pinMismatch.rawValue])
        XCTAssertEqual(pinned.afnetworking.kind, .tlsRejected(.pinMismatch))
        let unreadable = urlError(NSURLErrorServerCertificateUntrusted, [AFNetworkingSecurityPolicyFailureReasonErrorKey: "no such reason"])
        XCTAssertEqual(unreadable.afnetworking.kind, .tlsRejected(nil))
        XCTAssertNotEqual(pinned.afnetworking.kind, .tlsRejected(.expired))
    }

    func testASecurityPolicyErrorIsATLSRejectionWithItsReason() {
        for reason in SecurityPolicyFailureReason.allCases {
            XCTAssertEqual(SecurityPolicyError(reason).afnetworking.kind, .tlsRejected(reason), "\(reason)")
        }
    }

    func testCancellationErrorIsCancelled() {
        XCTAssertEqual(CancellationError().afnetworking.kind, .cancelled)
        XCTAssertEqual(AFNetworkingError(CancellationError()).kind, .cancelled)
    }

    // MARK: - Other domains

    func testSerializationDomains() throws {
        let response = try XCTUnwrap(HTTPURLResponse(url: URL(string: "http://h/x")!, statusCode: 500, httpVersion: "HTTP/1.1",
                                                    headerFields: nil))
        let body = Data("oops".utf8)
        let status = NSError(domain: AFURLResponseSerializationErrorDomain, code: NSURLErrorBadServerResponse, userInfo: [
            AFNetworkingOperationFailingURLResponseErrorKey: response,
            AFNetworkingOperationFailingURLResponseDataErrorKey: body,
        ])
        XCTAssertEqual(status.afnetworking.kind, .http(status: 500, body: body))
        XCTAssertNotEqual(status.afnetworking.kind, .http(status: 500, body: nil), "the body is part of the case")

        let noResponse = NSError(domain: AFURLResponseSerializationErrorDomain, code: NSURLErrorBadServerResponse)
        XCTAssertEqual(noResponse.afnetworking.kind, .serialization, "no response, no status to report")
        let parse = NSError(domain: AFURLResponseSerializationErrorDomain, code: NSURLErrorCannotDecodeContentData)
        XCTAssertEqual(parse.afnetworking.kind, .serialization)

        XCTAssertEqual(NSError(domain: AFURLRequestSerializationErrorDomain, code: NSURLErrorBadURL).afnetworking.kind, .badURL)
        XCTAssertEqual(NSError(domain: AFURLRequestSerializationErrorDomain, code: NSURLErrorCannotDecodeRawData).afnetworking.kind,
                       .serialization)
    }

    func testFileSystemAndForeignErrors() {
        XCTAssertEqual(NSError(domain: NSCocoaErrorDomain, code: CocoaError.Code.fileWriteFileExists.rawValue).afnetworking.kind, .file)
        XCTAssertEqual(NSError(domain: NSPOSIXErrorDomain, code: Int(ENOENT)).afnetworking.kind, .file)
        XCTAssertEqual(NSError(domain: "com.example.elsewhere", code: 1).afnetworking.kind, .other)
        struct Unrelated: Error {}
        XCTAssertEqual(Unrelated().afnetworking.kind, .other)
    }

    func testTheViewKeepsTheErrorAsReported() {
        let original = urlError(NSURLErrorTimedOut, [NSURLErrorFailingURLErrorKey: URL(string: "http://h/")!])
        let view = original.afnetworking
        XCTAssertTrue(view.nsError === original, "the same NSError, userInfo included")
        XCTAssertEqual(view.nsError.userInfo[NSURLErrorFailingURLErrorKey] as? URL, URL(string: "http://h/"))
        XCTAssertTrue(view.description.contains("timedOut"), view.description)
        XCTAssertTrue(view.description.contains(NSURLErrorDomain), view.description)
        XCTAssertTrue(view.description.contains("\(NSURLErrorTimedOut)"), view.description)
        let thrown: Error = view
        XCTAssertEqual((thrown as? AFNetworkingError)?.kind, .timedOut, "the view is itself throwable")
    }

    func testSwitchingOverTheKind() {
        func message(for error: Error) -> String {
            switch error.afnetworking.kind {
            case .http(let status, _) where status == 404: return "missing"
            case .http: return "http"
            case .timedOut: return "slow"
            case .cancelled: return "cancelled"
            default: return "other"
            }
        }
        let notFound = NSError(domain: AFURLResponseSerializationErrorDomain, code: NSURLErrorBadServerResponse, userInfo: [
            AFNetworkingOperationFailingURLResponseErrorKey: HTTPURLResponse(url: URL(string: "http://h/")!, statusCode: 404,
                                                                               httpVersion: nil, headerFields: nil)!,
        ])
        XCTAssertEqual(message(for: notFound), "missing")
        XCTAssertEqual(message(for: urlError(NSURLErrorTimedOut)), "slow")
        XCTAssertEqual(message(for: CancellationError()), "cancelled")
        XCTAssertEqual(message(for: urlError(NSURLErrorCancelled)), "cancelled")
        XCTAssertEqual(message(for: urlError(NSURLErrorCannotFindHost)), "other")
    }

    // MARK: - Real errors

    func testA404ThroughTheJSONSerializerIsHTTPWithItsStatusAndBody() {
        let document = Data(#"{"error":"no such user"}"#.utf8)
        server.respond("/users/7", status: 404, headers: [("Content-Type", "application/json")], body: document)
        let operation = HTTPRequestOperation(request: request("/users/7"))
        operation.responseSerializer = JSONResponseSerializer()
        let outcome = run(operation)
        let error = tryUnwrap(outcome.error)
        XCTAssertEqual(error?.afnetworking.kind, .http(status: 404, body: document))
        if case .http(let status, let body)? = error?.afnetworking.kind {
            XCTAssertEqual(status, 404)
            let parsed = body.flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: String] }
            XCTAssertEqual(parsed?["error"], "no such user", "the API's error document is there to read")
        }
    }

    func testAnUnparseableBodyIsSerialization() {
        server.respond("/broken", headers: [("Content-Type", "application/json")], body: Data("{not json".utf8))
        let operation = HTTPRequestOperation(request: request("/broken"))
        operation.responseSerializer = JSONResponseSerializer()
        XCTAssertEqual(run(operation).error?.afnetworking.kind, .serialization)
    }

    func testAnErrorStatusWithAnUnparseableBodyIsStillHTTP() {
        // The JSON serializer chains the status error under the parse error;
        // the status is what the caller needs to switch on.
        let body = Data("<html>Not Found</html>".utf8)
        server.respond("/gone", status: 404, headers: [("Content-Type", "application/json")], body: body)
        let operation = HTTPRequestOperation(request: request("/gone"))
        operation.responseSerializer = JSONResponseSerializer()
        let error = run(operation).error
        XCTAssertEqual(error?.afnetworking.kind, .http(status: 404, body: body), "\(String(describing: error))")
    }

    func testAnUnacceptableContentTypeIsSerialization() {
        server.respond("/page", headers: [("Content-Type", "text/html")], body: Data("<html></html>".utf8))
        let operation = HTTPRequestOperation(request: request("/page"))
        operation.responseSerializer = JSONResponseSerializer()
        XCTAssertEqual(run(operation).error?.afnetworking.kind, .serialization)
    }

    func testARefusedConnectionCarriesCurlsOwnError() {
        var refused = URLRequest(url: URL(string: "http://127.0.0.1:\(Fixtures.refusedPort)/refused")!)
        refused.timeoutInterval = 10
        let outcome = run(HTTPRequestOperation(request: refused))
        let error = tryUnwrap(outcome.error)
        XCTAssertEqual(error?.domain, NSURLErrorDomain)
        XCTAssertEqual(error?.code, NSURLErrorCannotConnectToHost)
        XCTAssertEqual(error?.afnetworking.kind, .cannotConnect)
        XCTAssertEqual(error?.userInfo[NSURLErrorFailingURLErrorKey] as? URL, refused.url)
        let underlying = error?.userInfo[NSUnderlyingErrorKey] as? NSError
        XCTAssertEqual(underlying?.domain, AFNetworkingCurlErrorDomain)
        XCTAssertEqual(AFNetworkingCurlErrorDomain, "AFNetworkingCurlErrorDomain")
        XCTAssertEqual(underlying?.code, 7, "CURLE_COULDNT_CONNECT")
        XCTAssertFalse(underlying?.localizedDescription.isEmpty ?? true, "curl's own message")
    }

    func testAnIdleTimeoutIsTimedOut() {
        server.route("/stall") { _ in [.wait(5), .head(status: 200, headers: [("Content-Length", "0")]), .end] }
        let operation = HTTPRequestOperation(request: request("/stall", timeout: 0.5))
        XCTAssertEqual(run(operation).error?.afnetworking.kind, .timedOut)
    }

    func testACancelledOperationIsCancelled() {
        server.route("/stall") { _ in [.wait(5), .head(status: 200, headers: [("Content-Length", "0")]), .end] }
        let operation = HTTPRequestOperation(request: request("/stall"))
        let done = expectation(description: "done")
        let failure = Locked<Error?>(nil)
        operation.setCompletionBlockWithSuccess({ _, _ in done.fulfill() }, failure: { _, error in
            failure.value = error
            done.fulfill()
        })
        OperationQueue().addOperation(operation)
        XCTAssertTrue(spin(until: { operation.isExecuting }, timeout: 5))
        operation.cancel()
        wait(for: [done], timeout: 5)
        XCTAssertEqual(failure.value?.afnetworking.kind, .cancelled)
    }

    func testAnAwaitedCancellationIsCancelledToo() async throws {
        let server = self.server!
        server.route("/stall") { _ in [.wait(5), .head(status: 200, headers: [("Content-Length", "0")]), .end] }
        let operation = HTTPRequestOperation(request: request("/stall"))
        let waiter = Task { () -> AFNetworkingError.Kind? in
            do {
                _ = try await operation.result()
                return nil
            } catch {
                return error.afnetworking.kind
            }
        }
        let reached = await modernEventually(10) { !server.requests.isEmpty }
        XCTAssertTrue(reached, "the request reached the server before the cancel (else this tests a cancel before sending)")
        waiter.cancel()
        let kind = try await modernBounded(10) { await waiter.value }
        XCTAssertEqual(kind, .cancelled)
        XCTAssertEqual((operation.error as NSError?)?.afnetworking.kind, .cancelled)
    }

    // MARK: - Helpers

    private func tryUnwrap(_ error: NSError?, file: StaticString = #filePath, line: UInt = #line) -> NSError? {
        if error == nil { XCTFail("expected an error", file: file, line: line) }
        return error
    }
}
