@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Streamed responses from session tasks: `URLSession.bytes(for:)`'s shape.
extension URLSessionManager {
    /// Runs a data task for `request` whose body is not collected but handed
    /// out as it arrives; returns once the final response head is in.
    ///
    /// As with `URLSession`, an HTTP error status is not thrown: check the
    /// response's status code (the body of a 404 is the sequence). The
    /// response serializer is not used. What is thrown here is a failure
    /// before the head (`CancellationError` if the calling task was
    /// cancelled); a failure after it is thrown by the sequence's `next()`.
    /// The manager's blocks and notifications see the task as any data task's,
    /// without did-receive-data calls (the body goes to the sequence only).
    public func bytes(for request: URLRequest) async throws -> (ResponseBytes, URLResponse) {
        try await streamedTask(request).value
    }

    /// Makes, wires and resumes the streamed data task; hands over the sequence and head.
    func streamedTask(_ request: URLRequest) async throws -> Handover<(ResponseBytes, URLResponse)> {
        try await AsyncBridge.request { (finish: @escaping @Sendable (Result<Handover<(ResponseBytes, URLResponse)>, Error>) -> Void)
            -> (@Sendable () -> Void)? in
            let task = factory.makeDataTask(request, completion: .none, delivery: .inPlace)
            // Weak: the task holds the stream that holds this block.
            let (bytes, stream) = ResponseBytesLink.make { [weak task] in task?.cancel() }
            (task as? ManagedSessionTask)?.frontend.streamBody(to: stream)
            bytes.whenHeadArrives { head in finish(head.map { Handover(value: (bytes, $0)) }.mapError { $0 }) }
            task.resume()
            return { task.cancel() }
        }
    }
}

extension SessionTaskFrontend {
    /// Sends the body to `stream` instead of memory; before the first `resume()`.
    func streamBody(to stream: OutputStream) {
        _ = requestDriver.installOutput(stream)
    }
}
