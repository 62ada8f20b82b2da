@testable import AFNetworking
@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// Transitions of the transfer state machine, without sockets, threads or
/// clocks: each test feeds events and checks the actions that come out.
final class TransferStateMachineTests: XCTestCase {
    typealias Machine = TransferStateMachine
    let url = URL(string: "http://127.0.0.1:9/file")!

    // MARK: - Starting

    func testStartConsultsTheCacheForAPlainGET() {
        var machine = Machine()
        XCTAssertEqual(machine.phase, .ready)
        guard case .lookUpCache(_, let request) = machine.start(get(), bodyInMemory: true) else { return XCTFail("no lookup") }
        XCTAssertEqual(request.url, url)
        XCTAssertEqual(machine.phase, .executing)
        XCTAssertEqual(hop(machine.cacheLookupFinished(.load))?.tag, 1)
    }

    func testStartSkipsTheCacheWhenThePolicyBypassesIt() {
        var machine = Machine()
        XCTAssertEqual(hop(machine.start(get(cachePolicy: .reloadIgnoringLocalAndRemoteCacheData), bodyInMemory: true))?.tag, 1)
        XCTAssertEqual(hop(Machine().startingWithoutCache(post()))?.request.httpMethod, "POST")
    }

    func testASecondStartIsIgnored() {
        var machine = started()
        XCTAssertNone(machine.start(get(), bodyInMemory: true))
        XCTAssertTrue(machine.isCurrent(1))
    }

    func testAMachineWithoutACacheNeverLooksUp() {
        var machine = Machine(configuration: .init(consultsCache: false))
        XCTAssertEqual(hop(machine.start(get(), bodyInMemory: true))?.tag, 1)
    }

    // MARK: - Cancel in each state

    func testCancelBeforeStartEndsTheRequestWhenItIsStarted() {
        var machine = Machine()
        XCTAssertNone(machine.cancel(get()))
        XCTAssertEqual(machine.phase, .ready, "its queue must still start it")
        XCTAssertEqual(deliveredError(machine.start(get(), bodyInMemory: true))?.code, NSURLErrorCancelled)
        XCTAssertNone(machine.cancel(get()), "a second cancel changes nothing")
    }

    func testAStartByAFrontEndAlreadyCancelledEndsCancelledWithoutATransfer() {
        // Operation.isCancelled is set before cancel() reaches the machine; a
        // queue can start the operation in between.
        var machine = Machine()
        XCTAssertEqual(deliveredError(machine.start(get(), bodyInMemory: true, cancelled: true))?.code, NSURLErrorCancelled)
        XCTAssertNone(machine.cancel(get()), "the cancel that arrives afterwards changes nothing")
        XCTAssertNone(machine.start(get(), bodyInMemory: true), "no transfer ever starts")

        var paused = Machine()
        XCTAssertNone(paused.pause())
        XCTAssertEqual(deliveredError(paused.start(get(), bodyInMemory: true, cancelled: true))?.code, NSURLErrorCancelled,
                       "paused before it ran, a cancelled start still ends it")
    }

    func testCancelWhileLookingUpTheCacheDeliversAndIgnoresTheLookup() {
        var machine = Machine()
        _ = machine.start(get(), bodyInMemory: true)
        XCTAssertEqual(deliveredError(machine.cancel(get()))?.code, NSURLErrorCancelled)
        XCTAssertNone(machine.cacheLookupFinished(.load), "a lookup that comes back after the cancel is moot")
    }

    func testCancelMidTransferAbortsThatTransferAndDelivers() {
        var machine = started()
        _ = machine.headReceived(1, head(200, ["Content-Length": "10"]))
        _ = machine.bodyReceived(1, bytes(4))
        guard case .abortAndDeliver(let tag, let outcome) = machine.cancel(get()) else { return XCTFail("no abort") }
        XCTAssertEqual(tag, 1)
        XCTAssertEqual(outcome.error?.code, NSURLErrorCancelled)
        XCTAssertEqual(outcome.error?.userInfo[NSURLErrorFailingURLErrorKey] as? URL, url)
        XCTAssertFalse(machine.isCurrent(1))
    }

    func testReportsFromACancelledTransferAreIgnored() {
        var machine = started()
        _ = machine.cancel(get())
        guard case .ignore = machine.headReceived(1, head(200)) else { return XCTFail("late head not ignored") }
        guard case .refuse = machine.bodyReceived(1, bytes(3)) else { return XCTFail("late body not refused") }
        XCTAssertNone(machine.transferCompleted(1, response: head(200), error: nil))
        XCTAssertEqual(machine.outcome?.error?.code, NSURLErrorCancelled, "the late success does not replace the cancellation")
    }

    func testCancelWhilePausedDelivers() {
        var machine = started()
        _ = machine.pause()
        XCTAssertEqual(deliveredError(machine.cancel(get()))?.code, NSURLErrorCancelled)
    }

    func testCancelWhilePausedBeforeStartGoesBackToReadyUnlessAlreadyStarted() {
        var notStarted = Machine()
        _ = notStarted.pause()
        XCTAssertEqual(notStarted.phase, .paused)
        XCTAssertNone(notStarted.cancel(get()))
        XCTAssertEqual(notStarted.phase, .ready, "ready, so its queue starts it and start() ends it")

        var startedByQueue = Machine()
        _ = startedByQueue.pause()
        XCTAssertNone(startedByQueue.start(get(), bodyInMemory: true), "paused: start only records it")
        XCTAssertEqual(deliveredError(startedByQueue.cancel(get()))?.code, NSURLErrorCancelled,
                       "its queue is waiting for it to finish: it ends now")
    }

    func testCancelWhileAChallengeIsUnansweredEndsTheRequest() {
        var machine = started()
        let question = challenge(&machine, tag: 1)
        XCTAssertEqual(machine.phase, .executing)
        XCTAssertEqual(deliveredError(machine.cancel(get()))?.code, NSURLErrorCancelled)
        XCTAssertNone(machine.challengeAnswered(token: question.token, .use(credential())), "the late answer changes nothing")
        XCTAssertNil(machine.pendingChallenge(token: question.token))
    }

    func testCancelWhileARedirectIsUndecidedEndsTheRequest() {
        var machine = started()
        let question = redirect(&machine, tag: 1, to: "http://127.0.0.1:9/next")
        XCTAssertEqual(deliveredError(machine.cancel(get()))?.code, NSURLErrorCancelled)
        XCTAssertNone(machine.redirectDecided(token: question.token, question.proposed))
    }

    // MARK: - Pause and resume

    func testPauseMidTransferAbortsAndKeepsTheBytes() {
        var machine = started()
        _ = machine.headReceived(1, head(200, ["Content-Length": "100", "ETag": "\"e\""]))
        _ = machine.bodyReceived(1, bytes(40))
        guard case .abort(let tag) = machine.pause() else { return XCTFail("no abort") }
        XCTAssertEqual(tag, 1)
        XCTAssertEqual(machine.phase, .paused)
        XCTAssertEqual(machine.entityBytesInOutput, 40)
        guard case .received(let shown)? = machine.currentResponse else { return XCTFail("the response is kept while paused") }
        XCTAssertEqual(shown.statusCode, 200)
        guard case .refuse = machine.bodyReceived(1, bytes(10)) else { return XCTFail("bytes after the pause were taken") }
        XCTAssertEqual(machine.entityBytesInOutput, 40, "the resume offset is what was taken before the pause")
    }

    func testResumeAskForTheRestAndA206AppendsWithAbsoluteProgress() {
        var machine = started()
        _ = machine.headReceived(1, head(200, ["Content-Length": "100"]))
        _ = machine.bodyReceived(1, bytes(40))
        _ = machine.pause()
        let second = hop(machine.resume(with: ranged(from: 40), bodyInMemory: true))
        XCTAssertEqual(second?.tag, 2)
        XCTAssertEqual(machine.phase, .executing)
        guard case .proceed(.output, restartOutput: false) = machine.headReceived(2, head(206, ["Content-Range": "bytes 40-99/100", "Content-Length": "60"])) else {
            return XCTFail("a 206 from the offset must append")
        }
        guard case .keptWithProgress(let progress) = machine.bodyReceived(2, bytes(60)) else { return XCTFail("no progress") }
        XCTAssertEqual(progress, .init(bytes: 60, total: 100, expected: 100), "totals count from the entity's first byte")
        let outcome = delivered(machine.transferCompleted(2, response: head(206), error: nil))
        XCTAssertEqual(outcome?.memoryBody?.count, 100)
        XCTAssertNil(outcome?.error)
    }

    /// What a pause asks the rest of: nothing until the head of an entity
    /// arrived (a redirect's head is not one), so a request's own `Range`
    /// is left as it was.
    func testTheEntityInTheOutputIsKnownOnlyOnceItsHeadArrived() {
        var machine = started()
        XCTAssertNil(machine.entityInOutput.head)
        let question = redirect(&machine, tag: 1, to: "http://127.0.0.1:9/next")
        XCTAssertEqual(hop(machine.redirectDecided(token: question.token, question.proposed))?.tag, 2)
        _ = machine.pause()
        XCTAssertNil(machine.entityInOutput.head, "a redirect's head is not the entity's")
        XCTAssertEqual(machine.entityInOutput.bytes, 0)
        XCTAssertEqual(hop(machine.resume(with: get(), bodyInMemory: true))?.tag, 3)
        _ = machine.headReceived(3, head(200, ["Content-Length": "100", "ETag": "\"e\""]))
        _ = machine.bodyReceived(3, bytes(40))
        _ = machine.pause()
        XCTAssertEqual(machine.entityInOutput.head?.value(forField: "etag"), "\"e\"")
        XCTAssertEqual(machine.entityInOutput.bytes, 40)
    }

    func testA200ToAResumedRequestRestartsTheOutput() {
        var machine = pausedAfter(bytes: 40)
        _ = machine.resume(with: ranged(from: 40), bodyInMemory: true)
        guard case .proceed(.output, restartOutput: true) = machine.headReceived(2, head(200, ["Content-Length": "70"])) else {
            return XCTFail("a 200 must start the body over")
        }
        guard case .keptWithProgress(let progress) = machine.bodyReceived(2, bytes(70)) else { return XCTFail("no progress") }
        XCTAssertEqual(progress.total, 70)
        XCTAssertEqual(delivered(machine.transferCompleted(2, response: head(200), error: nil))?.memoryBody?.count, 70)
    }

    func testA206AtAnotherOffsetIsRefusedWithABadServerResponse() {
        var machine = pausedAfter(bytes: 40)
        _ = machine.resume(with: ranged(from: 40), bodyInMemory: true)
        guard case .refuse(let error, let outcome) = machine.headReceived(2, head(206, ["Content-Range": "bytes 10-99/100"])) else {
            return XCTFail("a 206 elsewhere must fail")
        }
        XCTAssertEqual(error.code, NSURLErrorBadServerResponse)
        XCTAssertTrue(error.localizedDescription.contains("resumed at byte 10"), error.localizedDescription)
        XCTAssertEqual(outcome.error?.code, NSURLErrorBadServerResponse)
        XCTAssertNone(machine.transferCompleted(2, response: nil, error: nil), "the refused transfer's end is moot")
    }

    func testA416ForACompleteBodyCompletesWithA206BuiltFromTheEarlierResponse() {
        var machine = started()
        _ = machine.headReceived(1, head(200, ["Content-Length": "40", "X-First": "yes"]))
        _ = machine.bodyReceived(1, bytes(40))
        _ = machine.pause()
        _ = machine.resume(with: ranged(from: 40), bodyInMemory: true)
        guard case .proceed(.discard, _) = machine.headReceived(2, head(416, ["Content-Range": "bytes */40"])) else {
            return XCTFail("the 416's body is not part of the entity")
        }
        let outcome = delivered(machine.transferCompleted(2, response: head(416), error: nil))
        guard case .received(let response)? = outcome?.response else { return XCTFail("no response") }
        XCTAssertEqual(response.statusCode, 206, "one rule: a resumed download completes with a 206")
        XCTAssertEqual(response.value(forField: "x-first"), "yes", "built from the earlier response")
        XCTAssertEqual(response.value(forField: "content-range"), "bytes 0-39/40")
        XCTAssertEqual(outcome?.memoryBody?.count, 40)
    }

    func testAnErrorAnswerToAResumedRequestLeavesThePartialEntityAlone() {
        var machine = Machine()
        XCTAssertEqual(hop(machine.start(ranged(from: 40), bodyInMemory: false))?.tag, 1, "a ranged request skips the cache")
        guard case .proceed(.aside, restartOutput: false) = machine.headReceived(1, head(503)) else { return XCTFail("not kept aside") }
        XCTAssertEqual(kept(machine.bodyReceived(1, bytes(12))), true)
        XCTAssertEqual(machine.entityBytesInOutput, 0, "nothing of the 503 reaches the output")
    }

    func testResumeWithoutRangeStartsTheOutputOver() {
        var machine = pausedAfter(bytes: 40)
        _ = machine.resume(with: get(cachePolicy: .reloadIgnoringLocalCacheData), bodyInMemory: true)
        XCTAssertEqual(machine.entityBytesInOutput, 0)
    }

    func testPauseBeforeStartWaitsForTheQueueOrForResume() {
        var machine = Machine()
        XCTAssertNone(machine.pause())
        XCTAssertEqual(machine.phase, .paused)
        XCTAssertNone(machine.resume(with: get(), bodyInMemory: true))
        XCTAssertEqual(machine.phase, .ready, "back to waiting for its queue")

        var startedWhilePaused = Machine()
        _ = startedWhilePaused.pause()
        _ = startedWhilePaused.start(get(), bodyInMemory: true)
        guard case .lookUpCache = startedWhilePaused.resume(with: get(), bodyInMemory: true) else { return XCTFail("resume must run it now") }
    }

    func testPauseWhileAChallengeIsUnansweredIgnoresTheAnswer() {
        var machine = started()
        let question = challenge(&machine, tag: 1)
        XCTAssertNone(machine.pause())
        XCTAssertEqual(machine.phase, .paused)
        XCTAssertNone(machine.challengeAnswered(token: question.token, .use(credential())))
        XCTAssertEqual(hop(machine.resume(with: get(cachePolicy: .reloadIgnoringLocalCacheData), bodyInMemory: true))?.tag, 2)
    }

    func testPauseAndCancelAfterTheEndChangeNothing() {
        var machine = started()
        _ = machine.transferCompleted(1, response: head(200), error: nil)
        XCTAssertNone(machine.pause())
        XCTAssertNone(machine.cancel(get()))
        XCTAssertEqual(machine.phase, .executing, "delivering")
    }

    // MARK: - Body routing and progress

    func testTheBodyGoesToMemoryOrToTheAdaptersStream() {
        var memory = started()
        _ = memory.headReceived(1, head(200, ["Content-Length": "5"]))
        guard case .keptWithProgress(let progress) = memory.bodyReceived(1, bytes(5)) else { return XCTFail("not kept") }
        XCTAssertEqual(progress, .init(bytes: 5, total: 5, expected: 5))

        var streamed = Machine(configuration: .init(consultsCache: false))
        _ = streamed.start(get(), bodyInMemory: false)
        _ = streamed.headReceived(1, head(200))
        guard case .forward(let forwarded) = streamed.bodyReceived(1, bytes(5)) else { return XCTFail("not forwarded") }
        XCTAssertEqual(forwarded.expected, -1)
        XCTAssertNil(delivered(streamed.transferCompleted(1, response: head(200), error: nil))?.memoryBody)
    }

    func testATransportErrorIsTheOutcome() {
        var machine = started()
        let failure = NSError(domain: NSURLErrorDomain, code: NSURLErrorNetworkConnectionLost)
        XCTAssertEqual(deliveredError(machine.transferCompleted(1, response: nil, error: failure))?.code, NSURLErrorNetworkConnectionLost)
    }

    func testATransferThatCannotStartIsTheOutcome() {
        var machine = started()
        let failure = NSError(domain: NSURLErrorDomain, code: NSURLErrorBadURL)
        XCTAssertEqual(deliveredError(machine.transferCouldNotStart(1, error: failure))?.code, NSURLErrorBadURL)
    }

    func testAnOutputFailureAbortsTheTransfer() {
        var machine = started()
        let failure = NSError(domain: NSURLErrorDomain, code: NSURLErrorCannotWriteToFile)
        guard case .abortAndDeliver(1, let outcome) = machine.fail(failure) else { return XCTFail("no abort") }
        XCTAssertEqual(outcome.error?.code, NSURLErrorCannotWriteToFile)
    }

    func testDeliveryThenCompletionFinish() {
        var machine = started()
        guard let outcome = delivered(machine.transferCompleted(1, response: head(200), error: nil)) else { return XCTFail("no outcome") }
        machine.outputFinished(outcome)
        XCTAssertEqual(machine.phase, .executing)
        machine.completionFinished()
        XCTAssertEqual(machine.phase, .finished)
        XCTAssertNone(machine.cancel(get()))
        XCTAssertNone(machine.start(get(), bodyInMemory: true))
    }

    // MARK: - Redirects

    func testARedirectIsAskedAboutThenFollowedWithCookiesStoredFirst() {
        var machine = started()
        let question = redirect(&machine, tag: 1, to: "http://127.0.0.1:9/next")
        XCTAssertEqual(question.proposed.url?.path, "/next")
        guard case .startTransfer(let next) = machine.redirectDecided(token: question.token, question.proposed) else {
            return XCTFail("the redirect was not followed")
        }
        XCTAssertEqual(next.tag, 2)
        XCTAssertEqual(next.request.url?.path, "/next")
        XCTAssertEqual(next.effects.storeCookies?.response.statusCode, 302)
        XCTAssertEqual(next.effects.storeCookies?.request.url, url)
    }

    func testADeclinedRedirectIsTheResponseWithItsBody() {
        var machine = started()
        let question = redirect(&machine, tag: 1, to: "http://127.0.0.1:9/next", body: 9)
        let outcome = delivered(machine.redirectDecided(token: question.token, nil))
        guard case .received(let response)? = outcome?.response else { return XCTFail("no response") }
        XCTAssertEqual(response.statusCode, 302)
        XCTAssertEqual(outcome?.memoryBody?.count, 9)
        XCTAssertNil(outcome?.error)
    }

    func testAnAnswerWithAnOldTokenIsIgnored() {
        var machine = started()
        let question = redirect(&machine, tag: 1, to: "http://127.0.0.1:9/next")
        XCTAssertNotNil(hop(machine.redirectDecided(token: question.token, question.proposed)))
        XCTAssertNone(machine.redirectDecided(token: question.token, question.proposed), "answered once")
    }

    func testTheSeventeenthRedirectFails() {
        var machine = started()
        var tag: UInt64 = 1
        for index in 0..<16 {
            let question = redirect(&machine, tag: tag, to: "http://127.0.0.1:9/\(index)")
            tag = hop(machine.redirectDecided(token: question.token, question.proposed))?.tag ?? 0
        }
        _ = machine.headReceived(tag, head(302, ["Location": "/again"]))
        let final = redirectHead(302, to: "http://127.0.0.1:9/again")
        XCTAssertEqual(deliveredError(machine.transferCompleted(tag, response: final, error: nil))?.code, NSURLErrorHTTPTooManyRedirects)
    }

    func testARedirectToAnotherSchemeFails() {
        var machine = started()
        _ = machine.headReceived(1, head(302, ["Location": "ftp://x/"]))
        let error = deliveredError(machine.transferCompleted(1, response: redirectHead(302, to: "ftp://x/"), error: nil))
        XCTAssertEqual(error?.code, NSURLErrorUnsupportedURL)
    }

    func testABodyStreamSentAgainIsMarkedForAFreshCopy() {
        var machine = Machine(configuration: .init(consultsCache: false))
        var request = post()
        request.httpBodyStream = InputStream(data: Data("body".utf8))
        XCTAssertEqual(hop(machine.start(request, bodyInMemory: true))?.needsFreshBodyStream, false)
        let question = redirect(&machine, tag: 1, to: "http://127.0.0.1:9/next", status: 307)
        XCTAssertNotNil(question.proposed.httpBodyStream, "307 keeps the body")
        XCTAssertEqual(hop(machine.redirectDecided(token: question.token, question.proposed))?.needsFreshBodyStream, true)
    }

    // MARK: - Challenges

    func testAChallengeIsAskedWithItsProtectionSpaceAndRetriedWithTheCredential() {
        var machine = started()
        let question = challenge(&machine, tag: 1, header: "Basic realm=\"R\"")
        XCTAssertEqual(question.protectionSpace.realm, "R")
        XCTAssertEqual(question.protectionSpace.authenticationMethod, NSURLAuthenticationMethodHTTPBasic)
        XCTAssertEqual(question.previousFailureCount, 0)
        guard case .startTransfer(let retry) = machine.challengeAnswered(token: question.token, .use(credential())) else {
            return XCTFail("no retry")
        }
        XCTAssertEqual(retry.credentials, TransferCredentials(user: "u", password: "p", scheme: .basic, forProxy: false))
        let again = challenge(&machine, tag: retry.tag, header: "Digest realm=\"R\", nonce=\"n\"")
        XCTAssertEqual(again.previousFailureCount, 1)
        XCTAssertEqual(again.protectionSpace.authenticationMethod, NSURLAuthenticationMethodHTTPDigest)
    }

    /// A credential whose persistence allows it is handed back for storing
    /// only once a head other than the challenge shows the server took it.
    func testACredentialIsRememberedOnlyOnceTheServerTookIt() {
        let kept = URLCredential(user: "u", password: "p", persistence: .forSession)
        for (status, remembered) in [(200, true), (401, false)] {
            var machine = started()
            let question = challenge(&machine, tag: 1)
            guard case .startTransfer(let retry) = machine.challengeAnswered(token: question.token, .use(kept)) else {
                return XCTFail("no retry")
            }
            let answer = head(status)
            _ = machine.headReceived(retry.tag, answer)
            let outcome = delivered(machine.transferCompleted(retry.tag, response: answer, error: nil))
            XCTAssertEqual(outcome?.acceptedCredentials.map(\.credential.user), remembered ? ["u"] : [], "after a \(status)")
        }
        // A credential that may not persist is never handed back.
        var machine = started()
        let question = challenge(&machine, tag: 1)
        guard case .startTransfer(let retry) = machine.challengeAnswered(token: question.token, .use(credential())) else {
            return XCTFail("no retry")
        }
        _ = machine.headReceived(retry.tag, head(200))
        XCTAssertEqual(delivered(machine.transferCompleted(retry.tag, response: head(200), error: nil))?.acceptedCredentials.count, 0)
    }

    func testAChallengeAnsweredWithoutACredentialIsTheResponse() {
        var machine = started()
        let question = challenge(&machine, tag: 1, body: 5)
        let outcome = delivered(machine.challengeAnswered(token: question.token, .continueWithoutCredential))
        XCTAssertEqual(outcome?.statusCode, 401)
        XCTAssertEqual(outcome?.memoryBody?.count, 5)
    }

    func testCancellingTheChallengeCancelsTheRequest() {
        var machine = started()
        let question = challenge(&machine, tag: 1)
        XCTAssertEqual(deliveredError(machine.challengeAnswered(token: question.token, .cancel))?.code, NSURLErrorCancelled)
    }

    func testA401WithoutAChallengeHeaderIsTheResponse() {
        var machine = started()
        _ = machine.headReceived(1, head(401))
        XCTAssertEqual(delivered(machine.transferCompleted(1, response: head(401), error: nil))?.statusCode, 401)
    }

    func testAuthenticationGivesUpAfterEightAttempts() {
        var machine = started()
        var tag: UInt64 = 1
        for _ in 0..<8 {
            let question = challenge(&machine, tag: tag)
            tag = hop(machine.challengeAnswered(token: question.token, .use(credential())))?.tag ?? 0
        }
        _ = machine.headReceived(tag, head(401, ["WWW-Authenticate": "Basic realm=\"R\""]))
        XCTAssertEqual(delivered(machine.transferCompleted(tag, response: head(401, ["WWW-Authenticate": "Basic realm=\"R\""]), error: nil))?.statusCode, 401)
    }

    func testASecondHeadInOneTransferReplacesTheFirst() {
        var machine = started()
        _ = machine.headReceived(1, head(401, ["WWW-Authenticate": "Digest realm=\"R\""]))
        _ = machine.bodyReceived(1, bytes(3))
        guard case .proceed(.output, _) = machine.headReceived(1, head(200, ["Content-Length": "4"])) else { return XCTFail("not output") }
        _ = machine.bodyReceived(1, bytes(4))
        XCTAssertEqual(delivered(machine.transferCompleted(1, response: head(200), error: nil))?.memoryBody?.count, 4)
    }

    func testHeldBodiesAreCutAtTheLimitAndACutOneIsNeverDeliveredShort() {
        // In memory too: a redirect's body (usually thrown away) is held only
        // up to the limit; declined, the cut body fails rather than arrive short.
        var inMemory = Machine(configuration: .init(consultsCache: false, heldBodyLimit: 10))
        _ = inMemory.start(get(), bodyInMemory: true)
        let first = redirect(&inMemory, tag: 1, to: "http://127.0.0.1:9/n", body: 25)
        let cutInMemory = delivered(inMemory.redirectDecided(token: first.token, nil))
        XCTAssertEqual(cutInMemory?.error?.code, NSURLErrorDataLengthExceedsMaximum)
        XCTAssertEqual(cutInMemory?.statusCode, 302)
        var streamed = Machine(configuration: .init(consultsCache: false, heldBodyLimit: 10))
        _ = streamed.start(get(), bodyInMemory: false)
        let second = redirect(&streamed, tag: 1, to: "http://127.0.0.1:9/n", body: 25)
        let cut = delivered(streamed.redirectDecided(token: second.token, nil))
        XCTAssertEqual(cut?.error?.code, NSURLErrorDataLengthExceedsMaximum, "a declined redirect's cut body is not delivered short")
        XCTAssertNil(cut?.bodyToWrite)
        XCTAssertEqual(cut?.statusCode, 302)
        // Within the limit, a declined redirect's body is delivered whole.
        var small = Machine(configuration: .init(consultsCache: false, heldBodyLimit: 10))
        _ = small.start(get(), bodyInMemory: false)
        let third = redirect(&small, tag: 1, to: "http://127.0.0.1:9/n", body: 10)
        XCTAssertEqual(delivered(small.redirectDecided(token: third.token, nil))?.bodyToWrite?.count, 10)
    }

    func testAnAnswerHeldForTheRetrierBecomesTheStreamedOutputPastTheLimit() {
        var machine = Machine(configuration: .init(consultsCache: false, heldBodyLimit: 10))
        guard case .adapt(let adapt) = machine.start(get(), bodyInMemory: false, interception: .init(original: get())) else {
            return XCTFail("not adapting")
        }
        let tag = hop(machine.adapted(token: adapt.token, .success(get())))?.tag ?? 0
        guard case .proceed(.provisional, false) = machine.headReceived(tag, head(404, ["Content-Length": "25"])) else {
            return XCTFail("not held for the retrier")
        }
        guard case .kept = machine.bodyReceived(tag, bytes(6)) else { return XCTFail("not held") }
        guard case .promote(let response, let held, let progress, false) = machine.bodyReceived(tag, bytes(9)) else {
            return XCTFail("not promoted")
        }
        XCTAssertEqual(response.statusCode, 404)
        XCTAssertEqual(held.count, 6)
        XCTAssertEqual(progress, .init(bytes: 15, total: 15, expected: 25))
        guard case .forward(let next) = machine.bodyReceived(tag, bytes(10)) else { return XCTFail("not forwarded") }
        XCTAssertEqual(next.total, 25)
        let outcome = delivered(machine.transferCompleted(tag, response: head(404, ["Content-Length": "25"]), error: nil))
        XCTAssertEqual(outcome?.statusCode, 404, "delivered as it is: the retrier is not asked about bytes already out")
    }

    // MARK: - Cache

    func testAFreshCachedEntryIsTheOutcome() {
        var machine = Machine()
        _ = machine.start(get(), bodyInMemory: true)
        let cached = cachedEntry("cached")
        let outcome = delivered(machine.cacheLookupFinished(.useCached(cached)))
        XCTAssertEqual(outcome?.servedFromCache, true)
        XCTAssertEqual(outcome?.memoryBody, Data("cached".utf8))
        XCTAssertEqual(outcome?.statusCode, 200)

        var streamed = Machine()
        _ = streamed.start(get(), bodyInMemory: false)
        XCTAssertEqual(delivered(streamed.cacheLookupFinished(.useCached(cached)))?.bodyToWrite, Data("cached".utf8),
                       "a stream output gets the cached body written")
    }

    func testA304ConfirmsTheRevalidatedEntry() {
        var machine = Machine()
        _ = machine.start(get(), bodyInMemory: true)
        var conditional = get()
        conditional.setValue("\"v\"", forHTTPHeaderField: "If-None-Match")
        XCTAssertEqual(hop(machine.cacheLookupFinished(.revalidate(cachedEntry("old"), conditional)))?.request.value(forHTTPHeaderField: "If-None-Match"), "\"v\"")
        guard case .proceed(.discard, _) = machine.headReceived(1, head(304)) else { return XCTFail("a 304 has no entity") }
        let outcome = delivered(machine.transferCompleted(1, response: head(304), error: nil))
        XCTAssertEqual(outcome?.servedFromCache, true)
        XCTAssertEqual(outcome?.memoryBody, Data("old".utf8))
    }

    func testARevalidationAnsweredWithA200TakesTheNewBody() {
        var machine = Machine()
        _ = machine.start(get(), bodyInMemory: true)
        _ = machine.cacheLookupFinished(.revalidate(cachedEntry("old"), get()))
        _ = machine.headReceived(1, head(200))
        _ = machine.bodyReceived(1, bytes(3))
        let outcome = delivered(machine.transferCompleted(1, response: head(200), error: nil))
        XCTAssertEqual(outcome?.servedFromCache, false)
        XCTAssertEqual(outcome?.memoryBody?.count, 3)
    }

    func testACacheOnlyRequestWithoutAnEntryFails() {
        var machine = Machine()
        _ = machine.start(get(), bodyInMemory: true)
        let failure = NSError(domain: NSURLErrorDomain, code: NSURLErrorResourceUnavailable)
        XCTAssertEqual(deliveredError(machine.cacheLookupFinished(.fail(failure)))?.code, NSURLErrorResourceUnavailable)
    }

    /// A stream output that holds an earlier attempt's bytes (paused without
    /// `Range`, sent again whole) and then gets an answer delivered from its
    /// held body (a redirect not followed) is emptied first: the body is the
    /// answer's alone, not appended to the old entity's beginning.
    func testADeclinedAnswerEmptiesAStreamThatHoldsAnEarlierAttemptsBytes() {
        var machine = Machine(configuration: .init(consultsCache: false))
        _ = machine.start(get(), bodyInMemory: false)
        _ = machine.headReceived(1, head(200, ["Content-Length": "100"]))
        _ = machine.bodyReceived(1, bytes(40))
        _ = machine.pause()
        XCTAssertEqual(hop(machine.resume(with: get(), bodyInMemory: false))?.tag, 2)
        let question = redirect(&machine, tag: 2, to: "http://127.0.0.1:9/elsewhere", body: 3)
        guard let outcome = delivered(machine.redirectDecided(token: question.token, nil)) else { return }
        XCTAssertEqual(outcome.statusCode, 302)
        XCTAssertEqual(outcome.bodyToWrite?.count, 3)
        XCTAssertTrue(outcome.restartsOutput, "the 40 bytes of the first attempt are not this answer's")

        // A first attempt's declined answer has nothing to empty.
        var fresh = Machine(configuration: .init(consultsCache: false))
        _ = fresh.start(get(), bodyInMemory: false)
        let first = redirect(&fresh, tag: 1, to: "http://127.0.0.1:9/elsewhere", body: 3)
        XCTAssertEqual(delivered(fresh.redirectDecided(token: first.token, nil))?.restartsOutput, false)
    }

    // MARK: - Helpers

    private func get(cachePolicy: URLRequest.CachePolicy = .useProtocolCachePolicy) -> URLRequest {
        var request = URLRequest(url: url)
        request.cachePolicy = cachePolicy
        return request
    }

    private func post() -> URLRequest {
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        return request
    }

    private func ranged(from offset: Int64) -> URLRequest {
        var request = get()
        request.setValue("bytes=\(offset)-", forHTTPHeaderField: "Range")
        return request
    }

    /// A machine whose first hop is in flight (tag 1).
    private func started() -> Machine {
        var machine = Machine(configuration: .init(consultsCache: false))
        _ = machine.start(get(), bodyInMemory: true)
        return machine
    }

    /// A machine paused after `count` body bytes of a 100-byte entity.
    private func pausedAfter(bytes count: Int) -> Machine {
        var machine = started()
        _ = machine.headReceived(1, head(200, ["Content-Length": "100"]))
        _ = machine.bodyReceived(1, bytes(count))
        _ = machine.pause()
        return machine
    }

    private func head(_ status: Int, _ fields: [String: String] = [:]) -> ReceivedResponse {
        ReceivedResponse(url: url, statusCode: status, statusLine: "HTTP/1.1 \(status) X", fields: fields.map { ($0.key, $0.value) })
    }

    private func redirectHead(_ status: Int, to target: String) -> ReceivedResponse {
        ReceivedResponse(url: url, statusCode: status, statusLine: "HTTP/1.1 \(status) X", fields: [("Location", target)],
                         redirectURL: URL(string: target))
    }

    private func redirect(_ machine: inout Machine, tag: UInt64, to target: String, status: Int = 302,
                          body: Int = 0) -> Machine.RedirectQuestion {
        guard case .proceed(.held, _) = machine.headReceived(tag, head(status, ["Location": target])) else {
            XCTFail("a redirect's body is held")
            return Machine.RedirectQuestion(token: 0, response: head(status), proposed: get())
        }
        if body > 0 { _ = machine.bodyReceived(tag, bytes(body)) }
        guard case .askRedirect(let question) = machine.transferCompleted(tag, response: redirectHead(status, to: target), error: nil) else {
            XCTFail("no redirect question")
            return Machine.RedirectQuestion(token: 0, response: head(status), proposed: get())
        }
        return question
    }

    private func challenge(_ machine: inout Machine, tag: UInt64, header: String = "Basic realm=\"R\"",
                           body: Int = 0) -> Machine.ChallengeQuestion {
        let response = head(401, ["WWW-Authenticate": header])
        _ = machine.headReceived(tag, response)
        if body > 0 { _ = machine.bodyReceived(tag, bytes(body)) }
        guard case .askChallenge(let question) = machine.transferCompleted(tag, response: response, error: nil) else {
            XCTFail("no challenge question")
            return Machine.ChallengeQuestion(token: 0, response: response, protectionSpace: URLProtectionSpace(host: "h", port: 80, protocol: "http", realm: nil, authenticationMethod: nil),
                                             previousFailureCount: 0)
        }
        return question
    }

    private func credential() -> URLCredential {
        URLCredential(user: "u", password: "p", persistence: .none)
    }

    private func cachedEntry(_ body: String) -> CachedURLResponse {
        let response = HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: ["ETag": "\"v\""])!
        return CachedURLResponse(response: response, data: Data(body.utf8))
    }

    private func bytes(_ count: Int) -> UnsafeRawBufferPointer {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(count, 1), alignment: 1)
        buffer.initializeMemory(as: UInt8.self, repeating: 7)
        addTeardownBlock { buffer.deallocate() }
        return UnsafeRawBufferPointer(rebasing: buffer[0..<count])
    }

    private func hop(_ action: Machine.Action, file: StaticString = #filePath, line: UInt = #line) -> Machine.HopStart? {
        guard case .startTransfer(let hop) = action else {
            XCTFail("expected a transfer to start, got \(action)", file: file, line: line)
            return nil
        }
        return hop
    }

    private func delivered(_ action: Machine.Action, file: StaticString = #filePath, line: UInt = #line) -> Machine.Outcome? {
        switch action {
        case .deliver(let outcome), .abortAndDeliver(_, let outcome): return outcome
        default:
            XCTFail("expected a delivery, got \(action)", file: file, line: line)
            return nil
        }
    }

    private func deliveredError(_ action: Machine.Action, file: StaticString = #filePath, line: UInt = #line) -> NSError? {
        delivered(action, file: file, line: line)?.error
    }

    private func kept(_ action: Machine.BodyAction) -> Bool {
        if case .kept = action { return true }
        return false
    }

    private func XCTAssertNone(_ action: Machine.Action, _ message: String = "", file: StaticString = #filePath, line: UInt = #line) {
        guard case .none = action else {
            return XCTFail("expected no action, got \(action) \(message)", file: file, line: line)
        }
    }
}

private extension TransferStateMachine {
    /// The cache's answer to the latest lookup (the last question asked).
    mutating func cacheLookupFinished(_ plan: CacheRules.Plan) -> Action {
        cacheLookupFinished(token: nextToken, plan)
    }

    /// Starts a machine that never consults the cache.
    func startingWithoutCache(_ request: URLRequest) -> Action {
        var machine = TransferStateMachine(configuration: .init(consultsCache: false))
        return machine.start(request, bodyInMemory: true)
    }
}
