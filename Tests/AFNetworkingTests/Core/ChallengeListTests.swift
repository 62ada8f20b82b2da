@testable import AFNetworking
@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
import XCTest

/// `WWW-Authenticate` values as RFC 9110 §11.6.1 writes them: several
/// challenges in one field, parameters split by the same commas, quoted
/// strings with escapes.
final class ChallengeListTests: XCTestCase {
    private typealias Challenge = ChallengeList.Challenge

    /// The challenges of one `WWW-Authenticate` field holding `value`.
    private func parse(_ value: String) -> [Challenge] {
        let url = URL(string: "http://127.0.0.1:9/")!
        let response = ReceivedResponse(url: url, statusCode: 401, statusLine: "HTTP/1.1 401 Unauthorized",
                                        fields: [("WWW-Authenticate", value)])
        return ChallengeList.challenges(in: response, field: "www-authenticate")
    }

    func testSeveralChallengesInOneField() {
        XCTAssertEqual(parse(#"Bearer realm="a", Basic realm="b""#),
                       [Challenge(scheme: "bearer", parameters: ["realm": "a"]), Challenge(scheme: "basic", parameters: ["realm": "b"])])
        XCTAssertEqual(parse("Negotiate, Basic realm=x"),
                       [Challenge(scheme: "negotiate"), Challenge(scheme: "basic", parameters: ["realm": "x"])])
        XCTAssertEqual(parse("Negotiate abc/+==, Basic"),
                       [Challenge(scheme: "negotiate"), Challenge(scheme: "basic")], "a token68 is no parameter")
    }

    func testParametersFollowTheirChallengeAndQuotedTextIsNotParsed() {
        let digest = parse(#"Digest nonce="realm=evil, x", realm = "in \"side\"", qop=auth"#)
        XCTAssertEqual(digest, [Challenge(scheme: "digest", parameters: ["nonce": "realm=evil, x", "realm": #"in "side""#, "qop": "auth"])])
        XCTAssertEqual(parse(#"realm="orphan", Basic"#), [Challenge(scheme: "basic")], "a parameter before any scheme belongs to none")
        XCTAssertEqual(parse(""), [])
    }

    func testTheOfferIsTheStrongestSchemeOfAnyFieldWithItsOwnRealm() throws {
        let url = try XCTUnwrap(URL(string: "http://127.0.0.1:9/"))
        func offer(_ values: [String]) -> ChallengeOffer? {
            let response = ReceivedResponse(url: url, statusCode: 401, statusLine: "HTTP/1.1 401 Unauthorized",
                                            fields: values.map { ("WWW-Authenticate", $0) })
            return ChallengeOffer.parse(response, forProxy: false)
        }
        XCTAssertEqual(offer([#"Bearer realm="api", Basic realm="site""#])?.realm, "site")
        XCTAssertEqual(offer([#"Bearer realm="api", Basic realm="site""#])?.scheme, .basic)
        XCTAssertEqual(offer([#"Basic realm="b""#, #"Digest realm="d", nonce="realm=x""#])?.scheme, .digest)
        XCTAssertEqual(offer([#"Basic realm="b""#, #"Digest realm="d", nonce="realm=x""#])?.realm, "d")
        XCTAssertNil(offer(["Bearer", "Negotiate"]))
    }
}
