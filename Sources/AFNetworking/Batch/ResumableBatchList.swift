import Foundation

/// The text format of a batch list (`afn batch`'s): one entry a line, a URL
/// followed by optional whitespace-separated fields —
///
/// ```text
/// # nightly
/// https://example.org/login                     id=login
/// https://example.org/a.tar   id=a   after=login   out=dist/a.tar
/// https://example.org/b.tar   after=login,a
/// https://example.org/notes.txt
/// ```
///
/// - `id=NAME`: the entry's id (no `,` or `=`, not starting with `#`);
///   without one, the entry's id is `#N`, N its line number.
/// - `after=NAME[,NAME…]`: the ids it waits for.
/// - `out=RELATIVE/PATH`: where its body goes under the output directory.
///
/// A line whose first non-blank character is `#` is a comment; blank lines are
/// skipped. A line with a word that is not a `field=value` pair is one URL as
/// a whole (a bare URL line, the older format; if it is not a URL, its entry
/// fails as such). A field other than these three, a field given twice, or an
/// empty value is an error (`ResumableBatchError.badLine`). Ids, dependencies
/// and paths are checked by `ResumableBatch`.
public enum ResumableBatchList {
    /// One entry of a list, as written.
    public struct Line: Sendable, Equatable {
        /// Its line number, from 1.
        public var number: Int
        /// The URL text, as written.
        public var url: String
        /// `id=`, if given.
        public var id: String?
        /// `after=`'s ids, in order (empty: none).
        public var after: [String]
        /// `out=`, if given.
        public var outputPath: String?

        /// Makes a line.
        public init(number: Int, url: String, id: String? = nil, after: [String] = [], outputPath: String? = nil) {
            self.number = number
            self.url = url
            self.id = id
            self.after = after
            self.outputPath = outputPath
        }

        /// The entry's id: `id=`'s, else `#N` (N: the line number).
        public var name: String { id ?? "#\(number)" }
    }

    /// The entries of `text`, in order. Throws `ResumableBatchError.badLine`
    /// for the first line that is not in the format.
    public static func parse(_ text: String) throws -> [Line] {
        var lines: [Line] = []
        // Counted by hand: "\r\n" is one Character, so it ends one line.
        var number = 0
        for raw in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline) {
            number += 1
            if let line = try parseLine(raw, number: number) { lines.append(line) }
        }
        return lines
    }

    /// One line: nil when it is blank or a comment.
    public static func parseLine(_ text: Substring, number: Int) throws -> Line? {
        let words = text.split(whereSeparator: { $0 == " " || $0 == "\t" })
        guard let first = words.first, !first.hasPrefix("#") else { return nil }
        let fields = words.dropFirst()
        // A word that is not `name=value`: the line is one URL as a whole (the
        // older format) — unless it also names a field, when something else
        // on it (an inline `# note`) would otherwise swallow id=/after=/out=.
        guard fields.allSatisfy({ $0.contains("=") }) else {
            let namesField = fields.contains { ["id=", "after=", "out="].contains(where: $0.hasPrefix) }
            if namesField, let stray = fields.first(where: { !$0.contains("=") }) {
                throw ResumableBatchError.badLine(line: number, reason: "'\(stray)' is not a field (a line is a URL, then id=, after=, out=; a comment is a line of its own starting with #)")
            }
            return Line(number: number, url: text.trimmingCharacters(in: .whitespaces))
        }
        var line = Line(number: number, url: String(first))
        var seen = Set<Substring>()
        for field in fields {
            let parts = field.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let (name, value) = (parts[0], parts.count > 1 ? String(parts[1]) : "")
            guard ["id", "after", "out"].contains(name) else {
                throw ResumableBatchError.badLine(line: number, reason: "unknown field '\(name)=' (a line is a URL, then id=, after=, out=)")
            }
            guard seen.insert(name).inserted else {
                throw ResumableBatchError.badLine(line: number, reason: "'\(name)=' is given twice")
            }
            guard !value.isEmpty else { throw ResumableBatchError.badLine(line: number, reason: "'\(name)=' has no value") }
            switch name {
            case "id":
                try checkID(value, line: number)
                line.id = value
            case "after":
                let ids = value.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
                for id in ids { try checkID(id, line: number) }
                line.after = ids
            default:
                line.outputPath = value
            }
        }
        return line
    }

    /// An id is non-empty, has no `,` or `=` (the field syntax) or control
    /// character, and does not start with `#` (the ids of lines without one).
    private static func checkID(_ id: String, line: Int) throws {
        guard !id.isEmpty else { throw ResumableBatchError.badLine(line: line, reason: "an empty id") }
        guard !id.hasPrefix("#"), !id.contains(","), !id.contains("="),
              !id.unicodeScalars.contains(where: { CharacterSet.controlCharacters.contains($0) }) else {
            throw ResumableBatchError.badLine(line: line, reason: "'\(id)' is not an id (no ',' or '=', not starting with '#')")
        }
    }
}
