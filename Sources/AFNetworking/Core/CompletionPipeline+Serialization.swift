@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension CompletionPipeline {
    /// What `serializer` makes of a finished request: the transport error if
    /// there is one, else the serializer's object or error. The library's own
    /// serializers read a received head directly (`readsReceivedHeads`), so
    /// no `HTTPURLResponse` is built for them; any other serializer — or a
    /// cached answer — gets `response()`, asked for only then. The serializer
    /// is caller code: call this without a lock held, off the network thread.
    static func serialize(_ outcome: TransferStateMachine.Outcome, with serializer: HTTPResponseSerializer, data: Data?,
                          response: () -> URLResponse?) -> Result<Any?, Error> {
        if let error = outcome.error { return .failure(error) }
        return Result {
            if serializer.readsReceivedHeads, let head = outcome.response?.received {
                return try serializer.responseObject(forReceived: ResponseSummary(head), data: data)
            }
            return try serializer.responseObject(for: response(), data: data)
        }
    }
}
