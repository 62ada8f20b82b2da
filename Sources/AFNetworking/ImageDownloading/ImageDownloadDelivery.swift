import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Where one caller's outcome goes. The block API always answers on the main
/// queue (3.2.1); the async twin resumes its continuation directly, so an
/// awaiting server task never depends on the main queue being serviced.
enum ImageDownloadDelivery: Sendable {
    case mainQueue(success: (@Sendable (URLRequest, HTTPURLResponse?, Image) -> Void)?,
                   failure: (@Sendable (URLRequest, HTTPURLResponse?, Error) -> Void)?)
    case direct(@Sendable (Result<Image, Error>) -> Void)

    /// Delivers one outcome to each of `deliveries`, in order: the direct ones
    /// now, the main-queue ones in one asynchronous hop (never inside the
    /// caller's own call). Call it with no lock held.
    static func deliver(_ outcome: Result<Image, Error>, request: URLRequest, response: HTTPURLResponse?,
                        to deliveries: [ImageDownloadDelivery]) {
        var mainBlocks: [@Sendable () -> Void] = []
        for delivery in deliveries {
            switch (delivery, outcome) {
            case (.direct(let resume), _):
                resume(outcome)
            case (.mainQueue(let success?, _), .success(let image)):
                mainBlocks.append { success(request, response, image) }
            case (.mainQueue(_, let failure?), .failure(let error)):
                mainBlocks.append { failure(request, response, error) }
            case (.mainQueue, _):
                break
            }
        }
        guard !mainBlocks.isEmpty else { return }
        DispatchQueue.main.async {
            for block in mainBlocks { block() }
        }
    }
}
