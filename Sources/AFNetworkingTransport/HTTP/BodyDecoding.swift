import CAFCompression
import Foundation

/// Which codings stand between a response's body as it arrives and the
/// representation the caller is given.
///
/// libcurl takes `chunked` apart and nothing else: with content decoding
/// off (`CURLOPT_HTTP_CONTENT_DECODING`, so that `ContentDecoder` decodes in
/// bounded steps) libcurl 7.88 also skips the decoder it stacks for
/// `Transfer-Encoding: gzip` and hands the body over still coded (curl 8.14
/// and later refuse such a coding themselves unless `CURLOPT_TRANSFER_ENCODING`
/// asked for it). So every other coding is undone here:
/// - transfer codings always: they are hop-by-hop, and a recipient must
///   decode them (RFC 9112 §6.1); a body still in one is no answer at all,
///   so one this library does not know fails the transfer;
/// - content codings when this library knows them all; otherwise the body
///   is delivered as received, its field saying what it holds (RFC 9110 §8.4).
///
/// The server applied the content codings first (they belong to the
/// representation), then the transfer codings in the order listed.
enum BodyDecoding {
    /// What becomes of one response's body.
    enum Plan: Equatable {
        /// Nothing to undo: the body is delivered as curl hands it over.
        case asReceived
        /// These codings, in the order the server applied them.
        case decode([cafdec_kind])
        /// A transfer coding that cannot be undone: the transfer fails with this reason.
        case refuse(String)
    }

    /// The plan for `response`, the answer to a `method` request.
    /// A redirect status with somewhere to go.
    private static func isRedirect(_ response: ReceivedResponse) -> Bool {
        guard [301, 302, 303, 307, 308].contains(response.statusCode), let location = response.value(forField: "location") else { return false }
        return !location.trimmingCharacters(in: .whitespaces).isEmpty
    }

    static func plan(for response: ReceivedResponse, method: String) -> Plan {
        // No body, whatever the fields say (RFC 9110 §6.4.1): nothing to undo, nothing to refuse.
        if response.statusCode == 204 || response.statusCode == 304 || (method.utf8.count == 4 && method.uppercased() == "HEAD") {
            return .asReceived
        }
        // (Most responses have neither field: no String is made for them.)
        var transfer: [cafdec_kind] = []
        if response.hasField("transfer-encoding") {
            switch TransferCodingChain.codingsToUndo(in: response.values(forField: "transfer-encoding")) {
            case .success(let kinds):
                transfer = kinds
            case .failure(let unknown):
                return .refuse("The response's Transfer-Encoding uses a coding this library cannot decode (\(unknown.name)).")
            }
        }
        var kinds: [cafdec_kind] = []
        // A redirect's body is not decoded (curl -L does not either): nobody
        // reads it when the redirect is followed, and a damaged one would fail
        // the request. Not followed, it is delivered as received, with its
        // Content-Encoding.
        if !isRedirect(response), response.hasField("content-encoding"),
           case .decode(let content) = ContentDecoder.plan(forContentEncoding: response.values(forField: "content-encoding").joined(separator: ",")) {
            kinds = content
        }
        kinds += transfer
        return kinds.isEmpty ? .asReceived : .decode(kinds)
    }
}
