import CAFCurl

/// A libcurl option or query that libcurl refused. Raised instead of trapping so
/// that a libcurl built without a feature (say, brotli or HTTP/2) fails the one
/// request that needed it, with a readable reason, rather than the process.
package struct CurlOptionError: Error, CustomStringConvertible, Sendable {
    package let code: CURLcode
    package let what: String

    package var description: String {
        let reason = curl_easy_strerror(code).map { String(cString: $0) } ?? "unknown"
        return "libcurl refused \(what): \(reason) (CURLcode \(code.rawValue))"
    }
}

extension CURLcode {
    /// Turns a non-OK status into a thrown `CurlOptionError`.
    func check(_ what: @autoclosure () -> String) throws {
        if self != CURLE_OK {
            throw CurlOptionError(code: self, what: what())
        }
    }
}
