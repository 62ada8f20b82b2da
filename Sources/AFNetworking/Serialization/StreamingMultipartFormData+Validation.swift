@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation

/// What a multipart part's headers must be to be sent as they are. A CR, LF
/// or NUL in a name, file name, MIME type or header value would end its
/// header line and could start another header or part; such a part is
/// refused (`NSURLErrorBadURL` in `AFURLRequestSerializationErrorDomain`),
/// never sent with the characters stripped. A `"` in a name or file name is
/// percent-encoded as browsers do (`MultipartBodyPart.escapedQuotedValue`).
/// Values are never quoted in a message: they may be credentials.
extension StreamingMultipartFormData {
    /// Why a part with this name, file name and MIME type cannot be sent, or nil.
    static func partProblem(name: String, fileName: String?, mimeType: String?) -> NSError? {
        let part = RequestValidation.printable(name)
        if !RequestValidation.isFieldValue(name) {
            return refusal("The multipart part name \"\(part)\" contains a CR, LF or NUL character")
        }
        if let fileName, !RequestValidation.isFieldValue(fileName) {
            return refusal("The file name \"\(RequestValidation.printable(fileName))\" of the multipart part \"\(part)\" contains a CR, LF or NUL character")
        }
        if let mimeType, !RequestValidation.isFieldValue(mimeType) {
            return refusal("The MIME type of the multipart part \"\(part)\" contains a CR, LF or NUL character")
        }
        return nil
    }

    /// Why a part with these caller-supplied header fields cannot be sent, or
    /// nil: each name must be an RFC 9110 token (not empty, no `:`, space or
    /// control character) and each value free of CR, LF and NUL.
    static func headerProblem(in headers: [(String, String)]) -> NSError? {
        for (field, value) in headers {
            if !RequestValidation.isToken(field) {
                return refusal("The multipart part header field \"\(RequestValidation.printable(field))\" has an invalid name (not a token)")
            }
            if !RequestValidation.isFieldValue(value) {
                return refusal("The multipart part header field \"\(RequestValidation.printable(field))\" has an invalid value (a CR, LF or NUL character)")
            }
        }
        return nil
    }

    private static func refusal(_ description: String) -> NSError {
        requestSerializationError(code: NSURLErrorBadURL, description: description)
    }
}
