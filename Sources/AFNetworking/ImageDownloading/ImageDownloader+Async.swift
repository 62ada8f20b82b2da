import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension ImageDownloader {
    /// The async twin of ``downloadImage(for:success:failure:)`` (a fresh
    /// receipt ID): returns the image (from the image cache too) or throws what
    /// `failure` would get. Cancelling the awaiting task withdraws this caller
    /// as ``cancelTask(for:)`` does (other callers keep the download; the last
    /// one cancels it) and throws `CancellationError`; a task already
    /// cancelled throws it at once and sends nothing. Needs no main queue.
    public func image(for request: URLRequest) async throws -> Image {
        try Task.checkCancellation()
        return try await AsyncBridge.request { (finish: @escaping @Sendable (Result<Handover<Image>, Error>) -> Void) in
            let receipt = download(request, receiptID: UUID(), delivery: .direct { result in
                finish(result.map { Handover(value: $0) })
            })
            guard let receipt else { return nil }
            return { [weak self] in self?.cancelTask(for: receipt) }
        }.value
    }
}
