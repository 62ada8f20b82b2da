@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation

/// The challenges of one `WWW-Authenticate` / `Proxy-Authenticate` field
/// value (RFC 9110 §11.6.1): a comma-separated list in which a challenge is a
/// scheme followed by a token68 or by parameters — and the parameters are
/// separated by the same commas. So `Bearer realm="a", Basic realm="b"` is two
/// challenges, and `realm=` inside a quoted value is no parameter.
enum ChallengeList {
    struct Challenge: Equatable {
        /// The scheme, lowercased (`basic`, `digest`, …).
        let scheme: String
        /// Parameters by lowercased name, values unquoted (the first of a repeated name).
        var parameters: [String: String] = [:]
    }

    /// The challenges of `response`'s `field` (lowercase), every field of
    /// that name in order. The list is split by the response's own list
    /// walker (commas outside quoted strings); each member is a scheme or a
    /// parameter of the scheme before it.
    static func challenges(in response: ReceivedResponse, field: StaticString) -> [Challenge] {
        var members: [String] = []
        response.forEachListMember(ofField: field) { members.append(String(decoding: $0.bytes, as: UTF8.self)) }
        return parse(members: members)
    }

    static func parse(members: [String]) -> [Challenge] {
        var challenges: [Challenge] = []
        for item in members {
            var scanner = Scanner(Substring(item))
            guard let first = scanner.token() else { continue }
            scanner.skipSpaces()
            if scanner.peek == "=" {
                // `name=value`: a parameter of the challenge before it.
                scanner.advance()
                scanner.skipSpaces()
                guard let value = scanner.tokenOrQuoted(), !challenges.isEmpty else { continue }
                let name = first.lowercased()
                if challenges[challenges.count - 1].parameters[name] == nil { challenges[challenges.count - 1].parameters[name] = value }
                continue
            }
            // A new challenge: its scheme, then a token68 or its first parameter.
            var challenge = Challenge(scheme: first.lowercased())
            if let name = scanner.token() {
                scanner.skipSpaces()
                if scanner.peek == "=" {
                    scanner.advance()
                    scanner.skipSpaces()
                    // `=` after a token with nothing parameter-like after it is token68 padding.
                    if let value = scanner.tokenOrQuoted() { challenge.parameters[name.lowercased()] = value }
                }
            }
            challenges.append(challenge)
        }
        return challenges
    }

    /// A cursor over one list member.
    private struct Scanner {
        var rest: Substring
        init(_ text: Substring) { rest = text }

        var peek: Character? { rest.first }
        mutating func advance() { rest = rest.dropFirst() }
        mutating func skipSpaces() { rest = rest.drop { $0 == " " || $0 == "\t" } }

        /// An RFC 9110 token (tchar run), or nil.
        mutating func token() -> String? {
            let run = rest.prefix { Self.isTokenCharacter($0) }
            guard !run.isEmpty else { return nil }
            rest = rest.dropFirst(run.count)
            return String(run)
        }

        /// A token, or a quoted-string's content with its escapes undone.
        mutating func tokenOrQuoted() -> String? {
            guard peek == "\"" else { return token() }
            advance()
            var value = ""
            var escaped = false
            while let character = rest.first {
                rest = rest.dropFirst()
                if escaped {
                    value.append(character)
                    escaped = false
                } else if character == "\\" {
                    escaped = true
                } else if character == "\"" {
                    return value
                } else {
                    value.append(character)
                }
            }
            return nil   // unterminated
        }

        private static func isTokenCharacter(_ character: Character) -> Bool {
            guard let ascii = character.asciiValue, ascii > 32, ascii < 127 else { return false }
            return !"\"(),/:;<=>?@[\\]{}".contains(character)
        }
    }
}
