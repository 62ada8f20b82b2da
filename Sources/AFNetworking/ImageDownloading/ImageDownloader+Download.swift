@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension ImageDownloader {
    /// The one path behind the block API and the async twin (3.2.1's order:
    /// bad URL, coalescing, image cache, new download). The image cache and
    /// the session manager are called with no lock held; a download for the
    /// same URL started meanwhile by another thread is joined instead.
    func download(_ request: URLRequest, receiptID: UUID, delivery: ImageDownloadDelivery) -> ImageDownloadReceipt? {
        guard let url = request.url else {
            let error = NSError(domain: NSURLErrorDomain, code: NSURLErrorBadURL, userInfo: [
                NSLocalizedDescriptionKey: "The request has no URL",
            ])
            ImageDownloadDelivery.deliver(.failure(error), request: request, response: nil, to: [delivery])
            return nil
        }
        let key = url.absoluteString
        let caller = ImageDownloadBook.Caller(receiptID: receiptID, delivery: delivery)
        let (joined, cache, manager) = state.withLock { state in
            (state.book.join(key, caller), state.imageCache, state.sessionManager)
        }
        if let joined { return ImageDownloadReceipt(receiptID: receiptID, task: joined) }

        switch request.cachePolicy {
        case .useProtocolCachePolicy, .returnCacheDataElseLoad, .returnCacheDataDontLoad:
            if let image = cache?.image(for: request, withAdditionalIdentifier: nil) {
                ImageDownloadDelivery.deliver(.success(image), request: request, response: nil, to: [delivery])
                return nil
            }
        default:
            break
        }

        let id = UUID()
        let task = manager.dataTask(with: request, uploadProgress: nil, downloadProgress: nil) { [weak self] response, object, error in
            self?.finish(key, id: id, response: response, object: object, error: error)
        }
        let start = state.withLock { state in
            state.book.add(key, ImageDownloadBook.Download(id: id, task: task, request: request, callers: [caller]),
                           order: state.prioritization)
        }
        switch start {
        case .resume:
            task.resume()
        case .wait:
            break
        case .joined(let existing):
            // Never resumed: cancelling only makes the session forget it.
            task.cancel()
            return ImageDownloadReceipt(receiptID: receiptID, task: existing)
        }
        return ImageDownloadReceipt(receiptID: receiptID, task: task)
    }

    /// A download's task ended: frees its slot, caches the image, answers its callers.
    private func finish(_ key: String, id: UUID, response: URLResponse?, object: Any?, error: Error?) {
        let (download, next, cache) = state.withLock { state in
            let (download, next) = state.book.complete(key, id: id)
            return (download, next, state.imageCache)
        }
        next?.resume()
        guard let download else { return }
        let httpResponse = response as? HTTPURLResponse
        let outcome: Result<Image, Error>
        if let error {
            outcome = .failure(error)
        } else if let image = object as? Image {
            outcome = .success(image)
        } else {
            // An empty body, or a response serializer that is not an image one.
            outcome = .failure(responseDecodingError(description: "Image data could not be decoded",
                                                     reason: "The response carried no image.",
                                                     response: response, data: nil))
        }
        if case .success(let image) = outcome, let cache,
           cache.shouldCache(image, for: download.request, withAdditionalIdentifier: nil) {
            cache.add(image, for: download.request, withAdditionalIdentifier: nil)
        }
        ImageDownloadDelivery.deliver(outcome, request: download.request, response: httpResponse,
                                      to: download.callers.map(\.delivery))
    }
}
