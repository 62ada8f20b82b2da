import AFNetworkingTransport
import Foundation

extension TransferCore {
    /// The trailer fields of the final response, once the request has an
    /// outcome: empty before that, for an answer from the cache, and for a
    /// response that sent none. Repeated names are joined by ", ".
    var trailerFields: [String: String] {
        guard case .received(let head)? = machine.outcome?.response else { return [:] }
        return head.trailerDictionary
    }
}
