@testable import AFNetworking
@_spi(AFNetworkingInternal) @testable import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// A session task's output (response decision, download file, resume data)
/// as a value, without I/O: events in, actions out. The last two tests run it
/// inside a `RequestDriver` on a fake engine, where opening the file and
/// installing its writer are one step against the outcome.
final class SessionTaskOutputTests: XCTestCase {
    typealias Machine = TransferStateMachine
    private let file = URL(fileURLWithPath: "/tmp/afn-test-partial")
    private let destination = URL(fileURLWithPath: "/tmp/afn-test-destination")

    // MARK: - The file

    func testAFileWrittenCompletedAndMovedIsNotRemovedAtTheEnd() {
        var output = SessionTaskOutput()
        expectNone(output.handle(.fileOpened(file, installed: true)))
        XCTAssertEqual(output.fileBeingWritten, file)
        expectNone(output.handle(.fileComplete))
        XCTAssertEqual(output.completeFile, file)
        expectNone(output.handle(.fileMoved(to: destination, error: nil, temporary: file)))
        guard case .finish(.moved(let moved), nil) = output.handle(.taskFinishing(rawHandlerTakesFile: false)) else {
            return XCTFail("the moved file is the completion's")
        }
        XCTAssertEqual(moved, destination)
    }

    func testAFileOpenedAfterTheOutcomeWasDecidedIsRemoved() {
        var output = SessionTaskOutput()
        guard case .removeFile(let removed) = output.handle(.fileOpened(file, installed: false)) else { return XCTFail("unwanted") }
        XCTAssertEqual(removed, file)
        guard case .removed = output.file else { return XCTFail("recorded as removed") }
    }

    func testACompleteFileNobodyMovedIsRemovedUnlessTheRawHandlerTakesIt() {
        var unwanted = SessionTaskOutput()
        _ = unwanted.handle(.fileOpened(file, installed: true))
        _ = unwanted.handle(.fileComplete)
        guard case .finish(.complete, let removing) = unwanted.handle(.taskFinishing(rawHandlerTakesFile: false)) else {
            return XCTFail("finished")
        }
        XCTAssertEqual(removing, file)
        guard case .removed = unwanted.file else { return XCTFail("recorded as removed") }

        var taken = SessionTaskOutput()
        _ = taken.handle(.fileOpened(file, installed: true))
        _ = taken.handle(.fileComplete)
        guard case .finish(.complete, nil) = taken.handle(.taskFinishing(rawHandlerTakesFile: true)) else {
            return XCTFail("the raw handler gets the file; it is deleted after the handler")
        }
    }

    func testAFailedMoveRemovesTheTemporaryFileAndOnlyTheFirstMoveCounts() {
        var output = SessionTaskOutput()
        _ = output.handle(.fileOpened(file, installed: true))
        _ = output.handle(.fileComplete)
        let failure = NSError(domain: NSCocoaErrorDomain, code: CocoaError.fileWriteFileExists.rawValue)
        expectNone(output.handle(.fileMoved(to: destination, error: failure, temporary: file)))
        expectNone(output.handle(.fileMoved(to: destination, error: nil, temporary: file)))
        guard case .finish(.moveFailed(let error, _), let removing) = output.handle(.taskFinishing(rawHandlerTakesFile: false)) else {
            return XCTFail("the first move's failure stands")
        }
        XCTAssertEqual(error.code, CocoaError.fileWriteFileExists.rawValue)
        XCTAssertEqual(removing, file)
    }

    func testADivertedBodyThatCouldNotBeWrittenIsRemoved() {
        var output = SessionTaskOutput()
        expectNone(output.handle(.diverted(to: file)))
        guard case .removeFile(file) = output.handle(.divertedBodyWritten(succeeded: false)) else { return XCTFail("removed") }
        var written = SessionTaskOutput()
        _ = written.handle(.diverted(to: file))
        expectNone(written.handle(.divertedBodyWritten(succeeded: true)))
        XCTAssertEqual(written.completeFile, file)
    }

    // MARK: - Resume data

    func testAPlainCancelKeepsNoFileForResumeDataNobodyGets() {
        var output = SessionTaskOutput()
        _ = output.handle(.fileOpened(file, installed: true))
        guard case .resumeData(let handlers, nil, let removing) = output.handle(.fileIncomplete(resume: Data("r".utf8), plainCancel: true)) else {
            return XCTFail("no data")
        }
        XCTAssertTrue(handlers.isEmpty)
        XCTAssertEqual(removing, file)
    }

    func testAHandlerAddedBeforeTheFileClosedGetsTheDataAndTheFileIsKept() {
        var output = SessionTaskOutput()
        _ = output.handle(.fileOpened(file, installed: true))
        let got = LockedState<[Data?]>([])
        guard case .cancelTask = output.handle(.resumeDataWanted({ data in got.withLock { $0.append(data) } })) else {
            return XCTFail("the task is cancelled; the handler waits")
        }
        guard case .resumeData(let handlers, let data?, nil) = output.handle(.fileIncomplete(resume: Data("r".utf8), plainCancel: true)) else {
            return XCTFail("asked for, so kept")
        }
        for handler in handlers { handler(data) }
        XCTAssertEqual(got.withLock { $0 }, [Data("r".utf8)])
        guard case .kept(file) = output.file else { return XCTFail("kept for the data") }
        guard case .none = output.handle(.completionStarted) else { return XCTFail("decided once") }
    }

    func testAHandlerAddedAfterTheDecisionGetsItAtOnce() {
        var output = SessionTaskOutput()
        _ = output.handle(.fileOpened(file, installed: true))
        _ = output.handle(.fileIncomplete(resume: Data("r".utf8), plainCancel: false))
        guard case .resumeData(let handlers, let data, nil) = output.handle(.resumeDataWanted({ _ in })) else {
            return XCTFail("answered, no cancel")
        }
        XCTAssertEqual(handlers.count, 1)
        XCTAssertEqual(data, Data("r".utf8))
    }

    func testWaitingHandlersGetNilWhenTheTaskEndsWithoutAFile() {
        var output = SessionTaskOutput()
        _ = output.handle(.resumeDataWanted({ _ in }))
        guard case .resumeData(let handlers, nil, nil) = output.handle(.completionStarted) else { return XCTFail("nil") }
        XCTAssertEqual(handlers.count, 1)
        guard case .resumeData(let late, nil, nil) = output.handle(.resumeDataWanted({ _ in })) else { return XCTFail("nil at once") }
        XCTAssertEqual(late.count, 1)
    }

    func testAFailureThatCannotBeResumedRemovesTheFile() {
        var output = SessionTaskOutput()
        _ = output.handle(.fileOpened(file, installed: true))
        guard case .resumeData(_, nil, file) = output.handle(.fileIncomplete(resume: nil, plainCancel: false)) else {
            return XCTFail("removed")
        }
    }

    // MARK: - The response decision through the output

    func testAnEndParkedForTheAnswerIsReleasedByIt() {
        var output = SessionTaskOutput()
        guard case .askAboutResponse = output.handle(.responseArrived(mustAsk: true)) else { return XCTFail("asked") }
        expectNone(output.handle(.outcomeFinal(outcome())))
        guard case .proceed(let released) = output.handle(.responseDecided(.allow)) else { return XCTFail("released") }
        XCTAssertNil(released.error)
        expectNone(output.handle(.responseDecided(.cancel)))
    }

    func testCancelWhileAskingReleasesTheParkedEndCancelled() {
        var output = SessionTaskOutput()
        _ = output.handle(.responseArrived(mustAsk: true))
        _ = output.handle(.outcomeFinal(outcome()))
        guard case .proceed(let released) = output.handle(.cancelled) else { return XCTFail("released") }
        XCTAssertEqual(released.error?.code, NSURLErrorCancelled)
    }

    // MARK: - Inside the driver (fake engine)

    func testADownloadFileOpenedBeforeTheFirstHopBecomesTheOutput() throws {
        let (driver, engine, frontend) = make()
        let stream = OutputStream.toMemory()
        expectNone(driver.installDownloadFile(file, stream: stream))
        guard case .writing(file) = driver.taskOutputFile else { return XCTFail("recorded with its writer") }
        XCTAssertNotNil(driver.writer)
        driver.handle(.resumeTask(URLRequest(url: URL(string: "http://127.0.0.1:9/f")!), bodyInMemory: false, retry: nil, budget: nil,
                                  admitted: true))
        let transfer = try XCTUnwrap(engine.transfer(tag: 1))
        _ = engine.head(transfer, status: 200)
        _ = engine.body(transfer, "to the file")
        let done = frontend.expectCompletion(self)
        engine.complete(transfer, status: 200)
        wait(for: [done], timeout: 10)
        XCTAssertEqual(stream.property(forKey: .dataWrittenToMemoryStreamKey) as? Data, Data("to the file".utf8))
    }

    func testADownloadFileOpenedAfterACancelIsUnwanted() {
        let (driver, _, _) = make()
        let request = URLRequest(url: URL(string: "http://127.0.0.1:9/f")!)
        driver.handle(.cancelTask(request, bodyInMemory: false))
        guard case .removeFile(file) = driver.installDownloadFile(file, stream: OutputStream.toMemory()) else {
            return XCTFail("the outcome was decided: the file goes")
        }
        XCTAssertNil(driver.writer, "no writer for an ended request")
        guard case .removed = driver.taskOutputFile else { return XCTFail("recorded as removed") }
    }

    // MARK: - Helpers

    private func make() -> (RequestDriver, FakeEngine, FakeFrontend) {
        makeDriverOnFakeEngine()
    }

    private func outcome() -> Machine.Outcome {
        .succeeded(for: URL(string: "http://127.0.0.1:9/f")!)
    }

    private func expectNone(_ action: SessionTaskOutput.Action, file: StaticString = #filePath, line: UInt = #line) {
        guard case .none = action else { return XCTFail("expected no action, got \(action)", file: file, line: line) }
    }
}
