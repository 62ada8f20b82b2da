import Foundation

extension URLConnectionOperation {
    /// The trailer fields (RFC 9110 §6.5) that followed the response body —
    /// a chunked HTTP/1.1 body's trailer section or HTTP/2's trailing HEADERS
    /// frame — readable once the operation has finished (in its completion
    /// and success/failure blocks). Empty before that, for a cached answer and
    /// for a response without trailers. Repeated names are joined by ", ".
    /// Not part of 2.7, which had no access to trailers.
    public var responseTrailerFields: [String: String] {
        driver.trailerFields
    }
}
