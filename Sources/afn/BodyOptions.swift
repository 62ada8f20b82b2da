import AFNetworking
import ArgumentParser
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The body of `post` and `put`: raw bytes (`-d`) or a multipart form (`-F`).
struct BodyOptions: ParsableArguments {
    @Option(name: .shortAndLong, help: ArgumentHelp(
        "The body, sent as is: text, @FILE for a file's bytes, @- for stdin. Content-Type: application/x-www-form-urlencoded (curl's default), application/json with --json, or -H's.",
        valueName: "text|@file"))
    var data: String?

    @Option(name: [.customShort("F"), .customLong("form")], help: ArgumentHelp(
        "A multipart/form-data field: name=value, or name=@FILE for a file part (repeatable).", valueName: "name=value|name=@file"))
    var form: [String] = []

    /// The help text `post` and `put` share.
    static let discussion = """
        -d sends its bytes unchanged (no newline stripping); -F builds a multipart/form-data body whose file parts are \
        streamed from disk with a MIME type guessed from the file name. Without -f/--fail an HTTP error status still \
        exits 0 and prints the body. See 'afn --help' for the exit statuses.
        """

    mutating func validate() throws {
        if data != nil, !form.isEmpty { throw ValidationError("-d and -F cannot be combined") }
        for field in form { _ = try Self.parse(field: field) }
    }

    /// One `-F` field.
    struct FormField: Sendable {
        enum Value: Sendable {
            case text(String)
            case file(String)
        }
        let name: String
        let value: Value
    }

    /// `name=value` or `name=@file`.
    static func parse(field: String) throws -> FormField {
        guard let equals = field.firstIndex(of: "="), equals != field.startIndex else {
            throw ValidationError("a form field reads name=value or name=@file: \(field)")
        }
        let name = String(field[..<equals])
        let value = String(field[field.index(after: equals)...])
        if value.hasPrefix("@"), value.count > 1 { return FormField(name: name, value: .file(String(value.dropFirst()))) }
        return FormField(name: name, value: .text(value))
    }

    /// The request for `method` and `url` with this body. Unreadable input
    /// files are a `ToolFailure` (26).
    func makeRequest(method: String, url: String, json: Bool) throws -> URLRequest {
        if !form.isEmpty { return try multipartRequest(method: method, url: url) }
        var request = try RequestOptions.makeRequest(method: method, url: url)
        if let data {
            request.httpBody = try Self.bytes(of: data)
            request.setValue(json ? "application/json" : "application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        }
        return request
    }

    private func multipartRequest(method: String, url: String) throws -> URLRequest {
        let fields = try form.map(Self.parse(field:))
        for case .file(let path) in fields.map(\.value) where !FileManager.default.isReadableFile(atPath: path) {
            throw ToolFailure(status: ExitStatus.readError, message: "cannot read \(path)")
        }
        do {
            return try HTTPRequestSerializer().multipartFormRequest(withMethod: method, urlString: url, parameters: nil) { formData in
                for field in fields {
                    switch field.value {
                    case .text(let text):
                        formData.appendPart(withForm: Data(text.utf8), name: field.name)
                    case .file(let path):
                        try formData.appendPart(withFileURL: URL(fileURLWithPath: path), name: field.name)
                    }
                }
            }
        } catch {
            throw ToolFailure(status: ExitStatus.readError, message: "cannot build the form: \(error.localizedDescription)")
        }
    }

    /// `-d`'s bytes: the text itself, a file's bytes (`@FILE`) or stdin (`@-`).
    private static func bytes(of argument: String) throws -> Data {
        guard argument.hasPrefix("@"), argument.count > 1 else { return Data(argument.utf8) }
        let path = String(argument.dropFirst())
        if path == "-" { return FileHandle.standardInput.readDataToEndOfFile() }
        guard let contents = FileManager.default.contents(atPath: path) else {
            throw ToolFailure(status: ExitStatus.readError, message: "cannot read \(path)")
        }
        return contents
    }
}
