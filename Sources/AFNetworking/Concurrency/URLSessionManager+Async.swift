import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `async` twins of the task factories.
extension URLSessionManager {
    /// Runs a data task for `request`; returns the response and the response serializer's object.
    public func data(for request: URLRequest) async throws -> sending (response: URLResponse, responseObject: Any?) {
        try await awaitTask { dataTask(with: request, completionHandler: $0) }.value
    }

    /// Runs an upload task streaming `fileURL`; returns the response and the response serializer's object.
    public func upload(for request: URLRequest, fromFile fileURL: URL) async throws -> sending (response: URLResponse, responseObject: Any?) {
        try await awaitTask { uploadTask(with: request, fromFile: fileURL, progress: nil, completionHandler: $0) }.value
    }

    /// Downloads to `destination` (replacing nothing: an existing file is an
    /// error) and returns the response.
    public func download(for request: URLRequest, to destination: URL) async throws -> URLResponse {
        let handover = try await AsyncBridge.request { (finish: @escaping @Sendable (Result<Handover<URLResponse>, Error>) -> Void) -> (@Sendable () -> Void)? in
            let task = downloadTask(with: request, progress: nil, destination: { _, _ in destination }, completionHandler: { response, _, error in
                finish(error.map { .failure($0) } ?? .success(Handover(value: response)))
            })
            task.resume()
            return { task.cancel() }
        }
        return handover.value
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
