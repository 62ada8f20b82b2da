import Foundation

/// Upload stream packet size suggested for slow (3G) links: 16 KiB.
public let kAFUploadStream3GSuggestedPacketSize = 1024 * 16

/// Delay between packets suggested for slow (3G) links: 0.2 s.
public let kAFUploadStream3GSuggestedDelay: TimeInterval = 0.2

/// Receives the parts of a `multipart/form-data` body (`AFMultipartFormData`).
/// A `"` in a name or file name is percent-encoded (`%22`), as browsers do. A
/// part that cannot be sent as given — a CR, LF or NUL in its name, file name,
/// MIME type or a header value, a header name that is not a token — is
/// refused, never sent changed: the throwing methods throw, the others leave
/// the part out and `multipartFormRequest` throws the first such problem once
/// the block has run (`NSURLErrorBadURL` in `AFURLRequestSerializationErrorDomain`).
public protocol MultipartFormData: AnyObject {
    /// Appends a file part named `name`, with the file's name and a MIME type guessed
    /// from its extension. Throws when the URL is not a file URL, cannot be read, or
    /// is not a regular file (a directory, FIFO or device); a symbolic link is
    /// followed, and the part is the whole file it names.
    func appendPart(withFileURL fileURL: URL, name: String) throws

    /// Appends a file part with an explicit file name and MIME type. Throws when the URL
    /// is not a file URL, cannot be read, or is not a regular file (a symbolic link is
    /// followed); the file is streamed in chunks when sent.
    func appendPart(withFileURL fileURL: URL, name: String, fileName: String, mimeType: String) throws

    /// Appends `length` bytes read from `inputStream` as a file part. The stream
    /// must hold exactly `length` bytes, or sending the body fails
    /// (`NSURLErrorRequestBodyStreamExhausted`). A negative length cannot be
    /// sent: the part is left out and `multipartFormRequest` throws
    /// `NSURLErrorBadURL` in `AFURLRequestSerializationErrorDomain`.
    func appendPart(with inputStream: InputStream?, name: String, fileName: String, length: Int64, mimeType: String)

    /// Appends in-memory data as a file part.
    func appendPart(withFileData data: Data, name: String, fileName: String, mimeType: String)

    /// Appends a plain form field.
    func appendPart(withForm data: Data, name: String)

    /// Appends a part with caller-supplied headers: each name must be an RFC 9110
    /// token (not empty, no `:` or space) and no value may hold a CR, LF or NUL.
    func appendPart(withHeaders headers: [String: String]?, body: Data)

    /// Limits each read of the body stream to `numberOfBytes` and waits `delay`
    /// seconds after each. A packet size of 0 or less, or a negative or
    /// non-finite delay, means no throttling (and undoes an earlier call).
    func throttleBandwidth(withPacketSize numberOfBytes: Int, delay: TimeInterval)
}
