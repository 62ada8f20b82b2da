@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `async` twins of the task factories: the same tasks, made by the same
/// factory, with the manager's serializer, policy, notifications and
/// completion group. The awaiting task is resumed where the response was
/// serialized (the manager's own `completionQueue` if one is set, else a
/// processing queue), never through the main queue, so a program whose main
/// queue is not served gets its answers.
extension URLSessionManager {
    /// Runs a data task for `request`; returns the response and the response serializer's object.
    public func data(for request: URLRequest) async throws -> sending (response: URLResponse, responseObject: Any?) {
        try await awaitTask { factory.makeDataTask(request, completion: .serialized($0), delivery: .inPlace) }.value
    }

    /// Runs an upload task streaming `fileURL`; returns the response and the response serializer's object.
    public func upload(for request: URLRequest, fromFile fileURL: URL) async throws -> sending (response: URLResponse, responseObject: Any?) {
        try await awaitTask { factory.makeUploadTask(request, body: .file(fileURL), completion: .serialized($0), delivery: .inPlace) }.value
    }

    private func awaitTask(_ make: (@escaping @Sendable (URLResponse, Any?, Error?) -> Void) -> URLSessionTask)
        async throws -> Handover<(response: URLResponse, responseObject: Any?)> {
        try await AsyncBridge.request {
            (finish: @escaping @Sendable (Result<Handover<(response: URLResponse, responseObject: Any?)>, Error>) -> Void) -> (@Sendable () -> Void)? in
            let task = make { response, object, error in
                finish(error.map { .failure($0) } ?? .success(Handover(value: (response, object))))
            }
            task.resume()
            return { task.cancel() }
        }
    }
}
