@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation

extension ReceivedResponse {
    /// The response that stands for an entity found already complete: a
    /// resumed request answered `416` with `Content-Range: bytes */N` equal to
    /// what the output holds (a process stopped between the last write and
    /// the move). With no earlier head of that entity at hand, the download
    /// is reported as the whole entity, a `200` of `length` bytes; the 416's
    /// own length, range and type describe its error body, not the entity.
    func standingForCompleteEntity(length: Int64) -> ReceivedResponse {
        let dropped: Set<String> = ["content-length", "content-range", "content-type", "content-encoding", "transfer-encoding"]
        var fields = self.fields.filter { !dropped.contains($0.name.lowercased()) }
        fields.append((name: "Content-Length", value: "\(length)"))
        let version = statusLine.split(separator: " ", maxSplits: 1).first.map(String.init) ?? "HTTP/1.1"
        return ReceivedResponse(url: url, statusCode: 200, statusLine: "\(version) 200 OK", fields: fields)
    }
}
