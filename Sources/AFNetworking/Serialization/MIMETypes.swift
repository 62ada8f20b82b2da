/// MIME types for file extensions following Apple's UTType mapping (what 2.7 got
/// from `UTTypeCopyPreferredTagWithClass`), not `/etc/mime.types`, so uploads carry the
/// same `Content-Type` as on Apple platforms.
enum MIMETypes {
    private static let table: [String: String] = [
        // Certificates and keys
        "cer": "application/x-x509-ca-cert", "crt": "application/x-x509-ca-cert", "der": "application/x-x509-ca-cert",
        "pem": "application/x-pem-file", "p12": "application/x-pkcs12", "pfx": "application/x-pkcs12",
        // Images
        "png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "jpe": "image/jpeg", "gif": "image/gif",
        "bmp": "image/bmp", "tif": "image/tiff", "tiff": "image/tiff", "ico": "image/vnd.microsoft.icon",
        "webp": "image/webp", "heic": "image/heic", "heif": "image/heif", "svg": "image/svg+xml", "psd": "image/vnd.adobe.photoshop",
        // Text and documents
        "txt": "text/plain", "text": "text/plain", "html": "text/html", "htm": "text/html", "css": "text/css",
        "csv": "text/csv", "rtf": "text/rtf", "xml": "application/xml", "json": "application/json",
        "js": "text/javascript", "md": "text/markdown", "vcf": "text/vcard", "ics": "text/calendar",
        "pdf": "application/pdf", "doc": "application/msword",
        "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "xls": "application/vnd.ms-excel", "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "ppt": "application/vnd.ms-powerpoint",
        "pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        "plist": "application/x-plist", "epub": "application/epub+zip",
        // Archives
        "zip": "application/zip", "gz": "application/x-gzip", "tgz": "application/x-gzip", "tar": "application/x-tar",
        "bz2": "application/x-bzip2", "7z": "application/x-7z-compressed", "rar": "application/x-rar-compressed",
        // Audio
        "mp3": "audio/mpeg", "m4a": "audio/mp4", "aac": "audio/aac", "wav": "audio/wav", "aif": "audio/aiff",
        "aiff": "audio/aiff", "caf": "audio/x-caf", "flac": "audio/flac", "ogg": "audio/ogg", "mid": "audio/midi",
        // Video
        "mp4": "video/mp4", "m4v": "video/x-m4v", "mov": "video/quicktime", "avi": "video/avi", "mpg": "video/mpeg",
        "mpeg": "video/mpeg", "3gp": "video/3gpp", "webm": "video/webm", "mkv": "video/x-matroska",
        // Other
        "wasm": "application/wasm", "swift": "text/x-swift", "c": "text/x-c", "h": "text/x-c-header",
        "sh": "application/x-sh", "py": "text/x-python-script", "woff": "font/woff", "woff2": "font/woff2",
        "ttf": "font/ttf", "otf": "font/otf",
    ]

    /// The MIME type for `pathExtension` (case-insensitive); `application/octet-stream` when unknown.
    static func mimeType(forPathExtension pathExtension: String) -> String {
        return table[pathExtension.lowercased()] ?? "application/octet-stream"
    }
}
