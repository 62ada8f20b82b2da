@testable import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// The streamed body's lifecycle as a value: events in, actions out, no I/O.
final class BodyChunkLifecycleTests: XCTestCase {
    private let a = Data("aa".utf8)
    private let b = Data("bbb".utf8)
    private let response = URLResponse(url: URL(string: "http://127.0.0.1/x")!, mimeType: nil, expectedContentLength: 5,
                                       textEncodingName: nil)
    private let dropped = NSError(domain: NSURLErrorDomain, code: NSURLErrorNetworkConnectionLost)

    func testChunksBufferInOrderAndAreReleasedWhenTaken() {
        var life = BodyChunkLifecycle()
        XCTAssertTrue(life.headArrived())
        XCTAssertFalse(life.headArrived(), "the head is answered once")
        XCTAssertEqual(life.received(a), .buffered)
        XCTAssertEqual(life.received(b), .buffered)
        XCTAssertEqual(life.bufferedBytes, 5)
        XCTAssertEqual(life.next(), .deliver(.chunk(a), released: 2))
        XCTAssertEqual(life.next(), .deliver(.chunk(b), released: 3))
        XCTAssertEqual(life.bufferedBytes, 0)
        XCTAssertEqual(life.peakBufferedBytes, 5)
        XCTAssertEqual(life.next(), .wait)
        XCTAssertTrue(life.consumerWaiting)
    }

    /// Several iterators may wait at once: each chunk goes to the one that
    /// asked first, the end reaches all of them (its error the oldest), as
    /// does a cancel.
    func testSeveralWaitingConsumersAreServedInTheOrderTheyAsked() {
        var life = BodyChunkLifecycle()
        XCTAssertEqual(life.next(), .wait)
        XCTAssertEqual(life.next(), .wait)
        XCTAssertEqual(life.received(a), .resumeConsumer(a, released: 2))
        XCTAssertEqual(life.received(b), .resumeConsumer(b, released: 3))
        XCTAssertFalse(life.consumerWaiting)
        XCTAssertEqual(life.next(), .wait)
        XCTAssertEqual(life.next(), .wait)
        XCTAssertEqual(life.finished(response: response, error: dropped).consumers, [.failure(dropped), .end])
        XCTAssertEqual(life.next(), .deliver(.end, released: 0))

        var cancelled = BodyChunkLifecycle()
        XCTAssertEqual(cancelled.next(), .wait)
        XCTAssertEqual(cancelled.next(), .wait)
        XCTAssertEqual(cancelled.cancel().consumers, [.cancelled, .cancelled])
    }

    func testAWaitingConsumerGetsTheNextChunkDirectly() {
        var life = BodyChunkLifecycle()
        XCTAssertEqual(life.next(), .wait)
        XCTAssertEqual(life.received(a), .resumeConsumer(a, released: 2))
        XCTAssertEqual(life.bufferedBytes, 0)
        XCTAssertEqual(life.peakBufferedBytes, 0)
        XCTAssertEqual(life.received(Data()), .buffered, "an empty piece is not a chunk")
        XCTAssertEqual(life.next(), .wait)
    }

    func testTheEndComesAfterTheBufferedChunksThenNilForever() {
        var life = BodyChunkLifecycle()
        _ = life.headArrived()
        _ = life.received(a)
        XCTAssertEqual(life.finished(response: response, error: nil), BodyChunkLifecycle.EndActions())
        XCTAssertEqual(life.received(b), .discard(released: 3), "nothing is taken after the end")
        XCTAssertEqual(life.next(), .deliver(.chunk(a), released: 2))
        XCTAssertEqual(life.next(), .deliver(.end, released: 0))
        XCTAssertEqual(life.next(), .deliver(.end, released: 0))
        XCTAssertEqual(life.phase, .drained)
    }

    func testAFailureAfterTheHeadIsThrownOnceAfterTheChunksBeforeIt() {
        var life = BodyChunkLifecycle()
        _ = life.headArrived()
        _ = life.received(a)
        _ = life.finished(response: response, error: dropped)
        XCTAssertEqual(life.next(), .deliver(.chunk(a), released: 2))
        XCTAssertEqual(life.next(), .deliver(.failure(dropped), released: 0))
        XCTAssertEqual(life.next(), .deliver(.end, released: 0), "after the error the sequence is over")
    }

    func testTheEndResumesAWaitingConsumer() {
        var life = BodyChunkLifecycle()
        _ = life.headArrived()
        XCTAssertEqual(life.next(), .wait)
        XCTAssertEqual(life.finished(response: response, error: dropped).consumers, [.failure(dropped)])
        XCTAssertFalse(life.consumerWaiting)
        XCTAssertEqual(life.next(), .deliver(.end, released: 0))
    }

    func testAnEndWithoutAHeadAnswersTheHeadWaiter() {
        var life = BodyChunkLifecycle()
        XCTAssertEqual(life.finished(response: response, error: nil).head, .success(response), "a cached answer has no head report")
        XCTAssertFalse(life.headArrived())

        var failed = BodyChunkLifecycle()
        XCTAssertEqual(failed.finished(response: nil, error: dropped).head, .failure(dropped))
        XCTAssertEqual(failed.next(), .deliver(.failure(dropped), released: 0),
                       "a sequence read without awaiting the head (an operation's) throws the failure too")

        var headless = BodyChunkLifecycle()
        XCTAssertEqual(headless.finished(response: nil, error: nil).head?.failureCode, NSURLErrorBadServerResponse)
    }

    func testCancelWhileRunningDropsTheBufferStopsTheTransferAndResumesTheConsumer() {
        var life = BodyChunkLifecycle()
        _ = life.headArrived()
        _ = life.received(a)
        _ = life.received(b)
        _ = life.next()
        _ = life.next()
        _ = life.received(a)
        var expected = BodyChunkLifecycle.EndActions()
        expected.released = 2
        expected.cancelTransfer = true
        XCTAssertEqual(life.cancel(), expected)
        XCTAssertEqual(life.next(), .deliver(.cancelled, released: 0))
        XCTAssertEqual(life.next(), .deliver(.end, released: 0), "reported once: then the sequence is over")
        XCTAssertEqual(life.received(b), .discard(released: 3))
        XCTAssertEqual(life.finished(response: response, error: nil), BodyChunkLifecycle.EndActions(), "the end of a cancelled stream does nothing")
        XCTAssertEqual(life.cancel(), BodyChunkLifecycle.EndActions(), "a second cancel does nothing")

        var waiting = BodyChunkLifecycle()
        _ = waiting.headArrived()
        _ = waiting.next()
        XCTAssertEqual(waiting.cancel().consumers, [.cancelled])
    }

    func testCancelBeforeTheHeadAnswersTheHeadWithCancelled() {
        var life = BodyChunkLifecycle()
        let actions = life.cancel()
        XCTAssertTrue(actions.cancelTransfer)
        XCTAssertEqual(actions.head?.failureCode, NSURLErrorCancelled)
        XCTAssertFalse(life.headArrived())
    }

    func testCancelAfterTheEndDropsWhatWaitsButStopsNothing() {
        var life = BodyChunkLifecycle()
        _ = life.headArrived()
        _ = life.received(a)
        _ = life.finished(response: response, error: nil)
        var expected = BodyChunkLifecycle.EndActions()
        expected.released = 2
        XCTAssertEqual(life.cancel(), expected)
        XCTAssertEqual(life.next(), .deliver(.cancelled, released: 0))

        var drained = BodyChunkLifecycle()
        _ = drained.finished(response: response, error: nil)
        _ = drained.next()
        XCTAssertEqual(drained.cancel(), BodyChunkLifecycle.EndActions(), "a sequence read to its end is not cancelled by dropping it")
    }

    func testManyChunksCompactWithoutLosingOrder() {
        var life = BodyChunkLifecycle()
        let chunks = (0..<300).map { Data([UInt8($0 % 256), UInt8($0 / 256)]) }
        for (index, chunk) in chunks.enumerated() {
            XCTAssertEqual(life.received(chunk), .buffered)
            if index % 3 == 0 { XCTAssertEqual(life.next(), .deliver(.chunk(chunks[index / 3]), released: 2)) }
        }
        var taken = 100
        while case .deliver(.chunk(let chunk), _) = life.next() {
            XCTAssertEqual(chunk, chunks[taken])
            taken += 1
        }
        XCTAssertEqual(taken, 300)
        XCTAssertEqual(life.bufferedBytes, 0)
    }
}

extension Result where Failure == NSError {
    fileprivate var failureCode: Int? {
        if case .failure(let error) = self { return error.code }
        return nil
    }
}
