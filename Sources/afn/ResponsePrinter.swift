import AFNetworking
@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Prints a finished exchange as `get`, `post` and `put` show it, and decides
/// the exit status (see `ExitStatus`):
/// - a transport error: its message on stderr, its status;
/// - an HTTP status >= 400 with `-f/--fail` (or `--resume`, which saves
///   nothing then): a message on stderr, no body, 22; `-o FILE` is left as it was
///   (its bytes were never written, see `OutputFile`);
/// - otherwise `-i`'s head and the body on stdout (unless `-o`), 0.
/// With `--json`, stdout gets one JSON object instead, whatever happened.
struct ResponsePrinter {
    let options: ResponseOptions
    let resumes: Bool

    func report(_ exchange: Exchange) -> Int32 {
        let status = exchange.response?.statusCode
        let httpFailure = status.map { $0 >= 400 && (options.fail || resumes) } ?? false
        let exit: Int32
        if let error = exchange.error {
            exit = ExitStatus.status(for: error)
        } else {
            exit = httpFailure ? ExitStatus.httpError : ExitStatus.success
        }

        if options.json {
            Console.outLine(JSONText.line(jsonObject(exchange, exit: exit)))
        } else {
            if options.include {
                // Each head as curl prints several: its lines, then a blank
                // line, each ended by CRLF as on the wire (and in curl's -i).
                for head in StatusAndHeaders.heads(exchange) { Console.out(Data((head.joined(separator: "\r\n") + "\r\n\r\n").utf8)) }
            }
            if !httpFailure, let body = exchange.body { Console.out(body) }
        }
        if let error = exchange.error {
            Console.error(Self.describe(error))
        } else if httpFailure, let status {
            let note = resumes ? "; nothing saved" : ""
            Console.error("the server answered HTTP \(status) for \(exchange.url?.absoluteString ?? "the request")\(note)")
        }
        return exit
    }

    /// The `--json` object: url, status, headers, body (parsed JSON, text, or
    /// `{"base64": …}` for other bytes; null when written to a file), metrics,
    /// error (`{"message", "domain", "code"}` or null) and exitCode.
    private func jsonObject(_ exchange: Exchange, exit: Int32) -> [String: Any] {
        var object: [String: Any] = [
            "url": JSONText.orNull(exchange.url?.absoluteString),
            "status": JSONText.orNull(exchange.response?.statusCode),
            "headers": JSONText.orNull(exchange.response.map { response in
                Dictionary(StatusAndHeaders.fields(response).map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
            }),
            "body": JSONText.orNull(JSONText.bodyValue(exchange.body, mimeType: exchange.response?.mimeType)),
            "metrics": JSONText.orNull(exchange.metrics?.jsonObject),
            "exitCode": Int(exit),
        ]
        if let error = exchange.error as NSError? {
            object["error"] = ["message": Self.describe(error), "domain": error.domain, "code": error.code] as [String: Any]
        } else {
            object["error"] = NSNull()
        }
        return object
    }

    /// An error's description, with libcurl's own message when there is one.
    static func describe(_ error: Error) -> String {
        let error = error as NSError
        var text = error.localizedDescription
        if let underlying = error.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == AFNetworkingCurlErrorDomain {
            text += " (curl: \(underlying.localizedDescription))"
        }
        if let url = error.userInfo[NSURLErrorFailingURLErrorKey] as? URL { text += " — \(url.absoluteString)" }
        return text
    }
}

/// The status line and header fields of a response, as `-i` and `-v` print them.
enum StatusAndHeaders {
    /// A head as it arrived: the server's status line (its reason phrase,
    /// not a table's) and its fields in order, in their case.
    static func lines(received head: ReceivedResponse) -> [String] {
        [head.statusLine] + head.fields.map { "\($0.name): \($0.value)" }
    }

    /// The heads `-i` prints: the final one as received; for a revalidated
    /// cached answer the server's 304 and then the stored head whose body
    /// follows; for the cache alone, the stored head.
    static func heads(_ exchange: Exchange) -> [[String]] {
        if let head = exchange.receivedHead { return [lines(received: head)] }
        guard exchange.response != nil else { return [] }
        let stored = storedLines(exchange)
        if let confirmation = exchange.revalidationHead { return [lines(received: confirmation), stored] }
        return [stored]
    }

    /// The head of an answer from the cache as the server sent it when it was
    /// stored (the cache kept it beside the response, updated by the 304 that
    /// confirmed it); for an entry stored without it, rebuilt from the response.
    static func storedLines(_ exchange: Exchange) -> [String] {
        if let head = exchange.storedHead { return lines(received: head) }
        guard let response = exchange.response else { return [] }
        return lines(response, httpVersion: exchange.httpVersion)
    }

    /// A stored (cached) response without its head as received: `HTTP/1.1 200 OK`
    /// (no reason phrase for HTTP/2), then `Name: value` lines sorted by name.
    static func lines(_ response: HTTPURLResponse, httpVersion: String) -> [String] {
        var status = "\(httpVersion) \(response.statusCode)"
        if httpVersion.hasPrefix("HTTP/1") {
            status += " " + HTTPURLResponse.localizedString(forStatusCode: response.statusCode)
        }
        return [status] + fields(response).map { "\($0.name): \($0.value)" }
    }

    /// The header fields, sorted by name.
    static func fields(_ response: HTTPURLResponse) -> [(name: String, value: String)] {
        response.allHeaderFields.map { (name: "\($0.key)", value: "\($0.value)") }
            .sorted { $0.name.lowercased() < $1.name.lowercased() }
    }
}

/// Compact JSON text for `--json` output.
enum JSONText {
    /// One line of JSON for `object` (keys sorted).
    static func line(_ object: Any) -> String {
        guard JSONSerialization.isValidJSONObject(object),
              let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else {
            return "{\"error\":{\"message\":\"the output could not be encoded as JSON\"}}"
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// `value`, or JSON's null.
    static func orNull(_ value: Any?) -> Any {
        value ?? NSNull()
    }

    /// A body as a JSON value: parsed when it is JSON (declared so, or
    /// undeclared and parseable), else UTF-8 text, else `{"base64": …}`.
    static func bodyValue(_ body: Data?, mimeType: String?) -> Any? {
        guard let body else { return nil }
        let declaredJSON = mimeType.map { $0.lowercased().hasSuffix("json") } ?? true
        if declaredJSON, !body.isEmpty, let value = try? JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed]) {
            return value
        }
        if let text = String(data: body, encoding: .utf8) { return text }
        return ["base64": body.base64EncodedString()]
    }
}

extension TransferMetrics {
    /// The metrics as a JSON object (times in seconds).
    var jsonObject: [String: Any] {
        [
            "domainLookup": domainLookup,
            "connect": connect,
            "secureConnection": secureConnection,
            "timeToFirstByte": timeToFirstByte,
            "total": total,
            "bytesSent": Int(bytesSent),
            "bytesReceived": Int(bytesReceived),
            "reusedConnection": reusedConnection,
            "httpVersion": httpVersion,
            "remoteAddress": JSONText.orNull(remoteAddress),
            "redirectCount": redirectCount,
        ]
    }
}
