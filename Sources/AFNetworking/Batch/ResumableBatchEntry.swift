import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One download of a `ResumableBatch`.
public struct ResumableBatchEntry: Sendable, Equatable {
    /// Unique within the batch; the manifest and the report name it so.
    public var id: String
    /// What is sent (a GET as a rule). Only absolute http(s) URLs are fetched;
    /// another ends the entry `.failed(ResumableBatchError.unsupportedURL)`.
    public var request: URLRequest
    /// The ids of the entries that must have succeeded before this one starts.
    public var dependencies: [String]
    /// Where the body goes, relative to the batch's output directory; nil: the
    /// URL's last path component. Ignored without an output directory.
    public var outputPath: String?

    /// An entry sending `request`.
    public init(id: String, request: URLRequest, dependencies: [String] = [], outputPath: String? = nil) {
        self.id = id
        self.request = request
        self.dependencies = dependencies
        self.outputPath = outputPath
    }

    /// An entry sending a GET for `url`.
    public init(id: String, url: URL, dependencies: [String] = [], outputPath: String? = nil) {
        self.init(id: id, request: URLRequest(url: url), dependencies: dependencies, outputPath: outputPath)
    }

    /// Whether the request is one the batch sends: an absolute http(s) URL with a host.
    var isFetchable: Bool {
        guard let url = request.url, let scheme = url.scheme?.lowercased(), let host = url.host else { return false }
        return (scheme == "http" || scheme == "https") && !host.isEmpty
    }

    /// The file name the URL gives: its last path component, if it names a file.
    var fileNameFromURL: String? {
        guard let name = request.url?.lastPathComponent, !name.isEmpty, name != "/", name != ".", name != ".." else { return nil }
        return name
    }
}
