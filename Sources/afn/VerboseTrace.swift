import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `-v`: the exchange as it happens, on stderr, curl-style: `>` for what is
/// sent, `<` for what arrives, `*` for the rest (redirects, challenges,
/// metrics, errors). Credentials and cookies are not shown.
final class VerboseTrace: Sendable {
    private static let secretHeaders: Set<String> = ["authorization", "proxy-authorization", "cookie", "set-cookie"]

    /// The request line, its headers and the body's size.
    func sending(_ request: URLRequest) {
        var lines = ["> \(request.httpMethod ?? "GET") \(request.url?.absoluteString ?? "?")"]
        let headers = (request.allHTTPHeaderFields ?? [:]).sorted { $0.key.lowercased() < $1.key.lowercased() }
        for (name, value) in headers {
            lines.append("> \(name): \(Self.secretHeaders.contains(name.lowercased()) ? "[hidden]" : value)")
        }
        if let body = request.httpBody {
            lines.append("> [body: \(body.count) bytes]")
        } else if request.httpBodyStream != nil {
            lines.append("> [body: a stream of \(request.value(forHTTPHeaderField: "Content-Length") ?? "unknown") bytes]")
        }
        emit(lines)
    }

    /// Reports each redirect and authentication challenge of `operation`,
    /// leaving their handling as it would be without the trace.
    func attach(to operation: HTTPRequestOperation) {
        operation.setRedirectResponseBlock { _, proposed, response in
            if let response = response as? HTTPURLResponse {
                self.emit(["< \(response.statusCode) redirect",
                           "* following the redirect to \(proposed.url?.absoluteString ?? "?")"])
                self.sending(proposed)
            }
            return proposed
        }
        operation.setWillSendRequestForAuthenticationChallengeBlock { operation, challenge in
            let space = challenge.protectionSpace
            let status = (challenge.failureResponse as? HTTPURLResponse).map { "\($0.statusCode) " } ?? ""
            let scheme = space.authenticationMethod.replacingOccurrences(of: "NSURLAuthenticationMethod", with: "")
            self.emit(["< \(status)challenge: \(scheme) realm \"\(space.realm ?? "")\" at \(space.host):\(space.port)",
                       "* answering it (attempt \(challenge.previousFailureCount + 1)) with the -u credentials if any"])
            operation.performDefaultHandling(for: challenge)
        }
    }

    /// The final response head, the metrics and the error, if any.
    func finished(_ exchange: Exchange) {
        var lines: [String] = []
        if let response = exchange.response {
            lines += StatusAndHeaders.lines(response, httpVersion: exchange.httpVersion).map { "< " + $0 }
        }
        if let metrics = exchange.metrics {
            lines += metrics.traceLines
        }
        if let error = exchange.error {
            lines.append("* error: \(ResponsePrinter.describe(error))")
        }
        emit(lines)
    }

    private func emit(_ lines: [String]) {
        guard !lines.isEmpty else { return }
        Console.err(lines.joined(separator: "\n") + "\n")
    }
}

extension TransferMetrics {
    /// The metrics as `-v` prints them.
    var traceLines: [String] {
        let milliseconds = { (seconds: TimeInterval) in String(format: "%.1f ms", seconds * 1000) }
        return [
            "* timing: dns \(milliseconds(domainLookup)), connect \(milliseconds(connect)), tls \(milliseconds(secureConnection)), "
                + "first byte \(milliseconds(timeToFirstByte)), total \(milliseconds(total))",
            "* \(httpVersion) to \(remoteAddress ?? "an unknown address"), \(reusedConnection ? "reused" : "new") connection, "
                + "\(redirectCount) redirect(s), \(bytesSent) bytes sent, \(bytesReceived) bytes received",
        ]
    }
}
