@testable import AFNetworking
@_spi(AFNetworkingInternal) @testable import AFNetworkingTransport
import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// The end of a request shared by operations and session tasks, with no
/// request at all: where each step runs, in which order, and that the
/// completion group is entered when the work is scheduled and left once,
/// after everything.
final class CompletionPipelineTests: XCTestCase {
    /// Where a step ran.
    private enum Place: String {
        case main, processing, custom, other
    }

    private static let customKey = DispatchSpecificKey<Bool>()
    private static let processingKey: DispatchSpecificKey<Bool> = {
        let key = DispatchSpecificKey<Bool>()
        CompletionDefaults.processingQueue.setSpecific(key: key, value: true)
        return key
    }()

    private func customQueue() -> DispatchQueue {
        let queue = DispatchQueue(label: "CompletionPipelineTests.custom")
        queue.setSpecific(key: Self.customKey, value: true)
        return queue
    }

    private static func here() -> Place {
        _ = processingKey
        if MainQueueWork.isOnMainQueue { return .main }
        if DispatchQueue.getSpecific(key: customKey) == true { return .custom }
        if DispatchQueue.getSpecific(key: processingKey) == true { return .processing }
        return .other
    }

    /// Runs `pipeline`, recording each step as "step@place", and waits until its group was left.
    private func trace(_ pipeline: (@escaping @Sendable () -> Void) -> CompletionPipeline, delivers: Bool = true) -> [String] {
        let steps = Locked<[String]>([])
        let record: @Sendable (String) -> Void = { steps.append("\($0)@\(Self.here().rawValue)") }
        let subject = pipeline { record("finished") }
        var deliver: (@Sendable () -> Void)?
        if delivers { deliver = { record("deliver") } }
        let produce: @Sendable () -> CompletionPipeline.Delivery = { [deliver] in
            record("produce")
            return CompletionPipeline.Delivery(deliver: deliver, after: { record("after") })
        }
        subject.run(beforeHop: { record("beforeHop") }, produce: produce)
        let left = expectation(description: "group left")
        subject.group.notify(queue: .global()) { left.fulfill() }
        wait(for: [left], timeout: 10)
        return steps.value
    }

    // MARK: - Queues and order

    func testACompletionQueueThatIsNotMainDoesAllTheWorkInOrder() {
        let queue = customQueue()
        let steps = trace { CompletionPipeline(queue: queue, group: DispatchGroup(), finished: $0) }
        XCTAssertEqual(steps, ["produce@custom", "deliver@custom", "finished@custom", "after@custom"])
    }

    func testTheMainQueueSerializesOnTheProcessingQueueAndDeliversOnMain() {
        let pipeline = CompletionPipeline(queue: .main, group: DispatchGroup(), finished: {})
        XCTAssertTrue(pipeline.hopsToMain)
        XCTAssertTrue(pipeline.workQueue === CompletionDefaults.processingQueue)
        let steps = trace { CompletionPipeline(queue: .main, group: DispatchGroup(), finished: $0) }
        // Waiters for the outcome are released before the delivery waits for the main queue.
        XCTAssertEqual(steps, ["produce@processing", "beforeHop@processing", "deliver@main", "finished@main", "after@main"])
    }

    func testAnInPlaceDeliveryNeverWaitsForTheMainQueue() {
        let steps = trace { CompletionPipeline(queue: .main, group: DispatchGroup(), inPlace: true, finished: $0) }
        XCTAssertEqual(steps, ["produce@processing", "deliver@processing", "finished@processing", "after@processing"])
    }

    func testNothingToDeliverFinishesWhereItWasProduced() {
        let steps = trace({ CompletionPipeline(queue: .main, group: DispatchGroup(), finished: $0) }, delivers: false)
        XCTAssertEqual(steps, ["produce@processing", "finished@processing", "after@processing"])
    }

    // MARK: - The completion group

    func testTheGroupIsEnteredWhenScheduledAndLeftAfterTheLastStep() {
        let queue = customQueue()
        let group = DispatchGroup()
        let enteredDuringAfter = Locked<Bool?>(nil)
        queue.suspend()
        CompletionPipeline(queue: queue, group: group, finished: {}).run {
            .init(deliver: {}) { enteredDuringAfter.value = group.wait(timeout: .now()) == .timedOut }
        }
        // Nothing ran yet (the queue is suspended), yet the group counts the work.
        XCTAssertEqual(group.wait(timeout: .now()), .timedOut)
        queue.resume()
        XCTAssertEqual(group.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(enteredDuringAfter.value, true)
    }

    func testEnterAndLeaveBalanceOverManyRunsOfEveryKind() {
        let group = DispatchGroup()
        let queue = customQueue()
        let runs = Locked(0)
        for index in 0..<60 {
            let finished: @Sendable () -> Void = { _ = runs.increment() }
            let pipeline = CompletionPipeline(queue: index % 2 == 0 ? queue : .main, group: group, inPlace: index % 3 == 0, finished: finished)
            var delivery = CompletionPipeline.Delivery()
            if index % 5 != 0 { delivery.deliver = {} }
            pipeline.run { [delivery] in delivery }
        }
        let left = expectation(description: "group left")
        group.notify(queue: .global()) { left.fulfill() }
        wait(for: [left], timeout: 10)
        XCTAssertEqual(runs.value, 60)
        // Balanced: left exactly as often as entered (one more leave would trap).
        XCTAssertEqual(group.wait(timeout: .now()), .success)
    }

    // MARK: - Serialization

    private let url = URL(string: "http://127.0.0.1:9/resource")!

    private func outcome(status: Int, contentType: String = "application/json", body: String) -> TransferStateMachine.Outcome {
        let head = ReceivedResponse(url: url, statusCode: status, statusLine: "HTTP/1.1 \(status) X", fields: [("Content-Type", contentType)])
        var outcome = TransferStateMachine.Outcome(failure: NSError(domain: NSURLErrorDomain, code: NSURLErrorUnknown), response: .received(head),
                                                   request: URLRequest(url: url))
        outcome.error = nil
        outcome.memoryBody = Data(body.utf8)
        return outcome
    }

    func testATransportErrorIsTheResultAndNothingIsSerialized() {
        var failed = outcome(status: 200, body: "{}")
        failed.error = NSError(domain: NSURLErrorDomain, code: NSURLErrorTimedOut)
        let serializer = RecordingSerializer()
        let asked = Locked(0)
        let result = CompletionPipeline.serialize(failed, with: serializer, data: failed.memoryBody) { asked.increment(); return nil }
        guard case .failure(let error as NSError) = result else { return XCTFail("expected the transport error, got \(result)") }
        XCTAssertEqual(error.code, NSURLErrorTimedOut)
        XCTAssertEqual(serializer.calls.value, 0)
        XCTAssertEqual(asked.value, 0)
    }

    func testTheLibrarysSerializersReadTheHeadWithoutAResponseObject() throws {
        let done = outcome(status: 200, body: #"{"a":1}"#)
        let asked = Locked(0)
        let result = CompletionPipeline.serialize(done, with: JSONResponseSerializer(), data: done.memoryBody) { asked.increment(); return nil }
        let object = try XCTUnwrap(try result.get() as? [String: Any])
        XCTAssertEqual(object["a"] as? Int, 1)
        XCTAssertEqual(asked.value, 0, "no HTTPURLResponse is asked for")
    }

    func testTheHeadIsValidated() {
        let done = outcome(status: 500, body: "{}")
        let result = CompletionPipeline.serialize(done, with: HTTPResponseSerializer(), data: done.memoryBody) { nil }
        guard case .failure(let error as NSError) = result else { return XCTFail("a 500 must fail validation, got \(result)") }
        XCTAssertEqual(error.domain, AFURLResponseSerializationErrorDomain)
    }

    func testASubclassGetsTheResponseTheFrontEndGivesOnce() throws {
        let done = outcome(status: 200, body: "body")
        let given = try XCTUnwrap(HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: [:]))
        let serializer = RecordingSerializer()
        let asked = Locked(0)
        let result = CompletionPipeline.serialize(done, with: serializer, data: Data("body".utf8)) { asked.increment(); return given }
        XCTAssertEqual(try result.get() as? Data, Data("body".utf8))
        XCTAssertEqual(asked.value, 1)
        XCTAssertEqual(serializer.calls.value, 1)
        XCTAssertTrue(serializer.seen.value === given)
    }

    func testACachedAnswerIsSerializedFromTheGivenResponse() throws {
        let cached = try XCTUnwrap(HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: ["Content-Type": "application/json"]))
        let restored = TransferStateMachine.Outcome(restoredResponse: cached, error: nil, body: Data("[1]".utf8))
        let asked = Locked(0)
        let result = CompletionPipeline.serialize(restored, with: JSONResponseSerializer(), data: restored.memoryBody) { asked.increment(); return cached }
        XCTAssertEqual(try result.get() as? [Int], [1])
        XCTAssertEqual(asked.value, 1)
    }
}

/// A serializer of the caller's own: never handed a received head.
private final class RecordingSerializer: HTTPResponseSerializer, @unchecked Sendable {
    // @unchecked: its records are Locked boxes.
    let calls = Locked(0)
    let seen = Locked<URLResponse?>(nil)

    override func responseObject(for response: URLResponse?, data: Data?) throws -> Any? {
        calls.increment()
        seen.value = response
        return try super.responseObject(for: response, data: data)
    }
}
