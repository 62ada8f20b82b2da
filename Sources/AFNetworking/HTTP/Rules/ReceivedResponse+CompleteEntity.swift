@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation

extension ReceivedResponse {
    /// The response that stands for an entity found already complete: a
    /// resumed request answered `416` with `Content-Range: bytes */N` equal to
    /// what the output holds (a process stopped between the last write and
    /// the move, or a pause after the last byte). One rule for every resumed
    /// download that completes: its response is a `206` — the server's own
    /// when it sent the rest, this one when the 416 confirmed there was no
    /// rest — here covering the whole entity (`Content-Range: bytes 0-(N-1)/N`,
    /// `Content-Length: N`). Built from `self`, the earlier response of the
    /// entity when there is one (its type and validators describe the
    /// entity); from the 416 otherwise, whose own type and length describe its
    /// error body and are dropped.
    func standingForCompleteEntity(length: Int64, describesEntity: Bool) -> ReceivedResponse {
        var dropped: Set<String> = ["content-length", "content-range", "content-encoding", "transfer-encoding"]
        if !describesEntity { dropped.insert("content-type") }
        var fields = self.fields.filter { !dropped.contains($0.name.lowercased()) }
        fields.append((name: "Content-Length", value: "\(length)"))
        fields.append((name: "Content-Range", value: "bytes 0-\(max(length - 1, 0))/\(length)"))
        let version = statusLine.split(separator: " ", maxSplits: 1).first.map(String.init) ?? "HTTP/1.1"
        return ReceivedResponse(url: url, statusCode: 206, statusLine: "\(version) 206 Partial Content", fields: fields)
    }
}
