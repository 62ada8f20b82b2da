import Foundation

/// Server responses from curl's test suite (tests/data/testNNNN at curl
/// commit 5c61e16, the `<data>` section as curl's test server sends it:
/// `%CR` and `crlf="headers"` applied, `%hex[…]hex%` as bytes), re-typed as
/// the facts they are, so the same answers are checked here. Where curl
/// frames a chunk with a bare LF, so do these.
enum CurlTransferCodingVectors {
    /// What the gzip vectors hold.
    static let linesText = "line 1\n line 2\n  line 3\n"
    /// `linesText` in gzip, 44 bytes (tests 1122, 1124, 1125, 1617).
    static let gzipLines = "1f8b0808799eab4100036c616c616c6100cbc9cc4b5530e452c801d1465c0a10863117000a02716018000000"
    /// What tests 1123 and 1277 decode to: curl's tests/data/data-xml1, 5,041
    /// bytes, nine lines of which end in CRLF.
    static let xmlListingCount = 5041
    static let xmlListingPrefix = "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n<!DOCTYPE project-listing"
    static let xmlListingSuffix = "  </project>\n</project-listing>\n"
    /// The body of tests 1482 and 1483, without chunk framing.
    static let chunkyText = String(repeating: "a", count: 64) + String(repeating: "b", count: 48)
        + String(repeating: "c", count: 32) + "\n"

    enum Part {
        case text(String)
        /// Hex digits; blanks and line breaks between them are ignored.
        case hex(String)
    }

    static func response(_ parts: Part...) -> Data {
        var data = Data()
        for part in parts {
            switch part {
            case .text(let text): data.append(contentsOf: Array(text.utf8))
            case .hex(let digits): data.append(contentsOf: bytes(ofHex: digits))
            }
        }
        return data
    }

    private static func bytes(ofHex hex: String) -> [UInt8] {
        let digits = hex.utf8.filter { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\n") }
        precondition(digits.count % 2 == 0, "whole bytes")
        return stride(from: 0, to: digits.count, by: 2).map { index in
            guard let byte = UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16) else {
                preconditionFailure("hex digits only")
            }
            return byte
        }
    }

    static let test1122 = response(
        .text("HTTP/1.1 200 OK swsclose\r\n"),
        .text("Date: Mon, 29 Nov 2004 21:56:53 GMT\r\n"),
        .text("Server: Apache/1.3.31 (Debian GNU/Linux) mod_gzip/1.3.26.1a PHP/4.3.9-1 mod_ssl/2.8.20 OpenSSL/0.9.7d mod_perl/1.29\r\n"),
        .text("Vary: Accept-Encoding\r\n"),
        .text("Content-Type: text/html; charset=ISO-8859-1\r\n"),
        .text("Transfer-Encoding: gzip\r\n"),
        .text("Content-Length: 44\r\n\r\n"),
        .hex(gzipLines))

    static let test1123 = response(
        .text("HTTP/1.1 200 OK\r\n"),
        .text("Date: Mon, 29 Nov 2004 21:56:53 GMT\r\n"),
        .text("Server: Apache/1.3.31 (Debian GNU/Linux) mod_gzip/1.3.26.1a PHP/4.3.9-1 mod_ssl/2.8.20 OpenSSL/0.9.7d mod_perl/1.29\r\n"),
        .text("Vary: Accept-Encoding\r\n"),
        .text("Content-Type: text/html; charset=ISO-8859-1\r\n"),
        .text("Transfer-Encoding: deflate, chunked\r\n\r\n"),
        .text("519\r\n"),
        .hex("""
            789cdc58db6ee336107d37907f60fdd402b66eb6133970b42872d904cd36c1da05ba4f062dd1361b491448cab93cf4db
            3b942889b11caf7783be04486272e69cc3e10c4993997c7a4a62b4215c50969e755dcbe92292862ca2e9eaac7b33bdeb
            fbfe68dc77bb9f82cee4978bbbf3d9b7fb4b9471f60f09653fa64202104dbf4d67975f50772d65766adb4b4ec43a2158
            5a2991f602870f248dec65d2d73cd177aca115c9a80ba25b5a4107a1caa6da4d6f4ea3c03d76bd896d184a44842599e3
            282280188ffdbee3f73d1739c353c73df5c613dbf01b843c531f51e039ceb0ef3a7dd7478e77eac1cf40532ac4ab3852
            9c90b958332e8330e7711d8e616fe397791c177084d308c574d1a616101d1e11a1963a6749525252822463b500c7fc19
            2d1947614c492afb824604fdf5f516498e53b1848a5a308b46c850de190ca202e17204a55aa97055df258d8938eae442
            75d418e23995f8c9423712893ccb405fa0ebd9ecbe57fc9df6d015b48f3a5745fbe2e67cd643b3cbdb3f2fe1f3f6e277
            805ddddc5ef68ae13fdfdd5f5f7e85360cf0486288a994ea674cc89e6ee6d00a197ba04414da28cf6286231802965a9e
            90a899750f65588847c623d584c8d23c5914f6e9f4f6a813122ee99286505730fd4138f8982843816a3cc108c5b4201b
            197b249c44479dc57395a41e926bf266c6abb258479dd91aa808c3ef82a66a3309486d9d6a9560069b0e79ce5127c6e9
            2ac72b228a1848baa19ca5090c20404797d0581b1b2a714ce5f35c848c936074e20fadd1c9c4deb26f8133c243900c06
            967b6c602bf3161ae6f3007b6d6c200b935ed72ccb63cc9bb18e4763886108cb79dbd3225403ba03cb775f115e876238
            ca609cd12bb4110ec7c5b9e15b236762eb8ee999872c075dcfadbcdaf00a530ee20f6a8c3180c81722e4349370448a60
            a04e87d7a61206a54fc3f55cede5e0822c711ecb896d1a4b18d47f5e1d6019943dd879685627a5add68b3db15bac466c
            cd12f2b6102c60ca4b157578da2643ebd6028da65cbd1c2e0760ada4688dc8e2c53b5c04c05a44d11a91179a1d2e0260
            2da2688d48b8863d4662b63a5caaa668c146a291e55972b82080b594a2352211591c2e02602da2688d08134f878b0058
            8b289a512f11a9f3f2076a5612aaba69bab1cc730e691324d0ebb7ea1a85d9881f28c94654c5d8084344dd1c0e575168
            2d53101b9d8472cef8e14a255e6b69b259d7840555ada0597a620a871ca4e0cbcdccfe1b9dc3e90129a379826e4bc7c4
            ae101aafbea7e49c9398d4996b99e7fafe169c58ae67c105e90df71b6c75af3a3976fc518b585db0da1c752fda7d71da
            052ce762ef9acc04ce5102135e3339976bf8aa869cb54c2512e7126e32a20ea9ec57dddaa04f609c5212a3a924297cc3
            af26b6e96c51a04abbebfeef02af22a28a6c205b74ce6212dc3da684d7b8c254456a9ba156bd6a09ab2f784e139a6269
            ce4e72b82114b58182d69d96d7f38ef7b9077bb9fb9caeefefe5ba7bc785a5b13feabd6ef778b8cf3dde4bf6c77bbdce
            5eb73bfa4edcdf096c7f6483d6d8e5fd6ebbfcb026327832c1430caea3b54e6d7c46f23923675d4e42781d289b7a49d5
            8bb2c1991bd95143ed72ec24ea7b0bb84f86aa183b5d3b99c6e3ac45dd7eb8bdc59554aa0d0576b8b3a35ff56deab79d
            5a25b6de690de2edbcb1e2de86e3ff2f69ce4f676c387867c6d4fbeae327caf50623f71d997a81a7d8c7cfd2c0738627
            efc8d235a14984e38f9fa8e17034f0de91a8b00f4f7df13379322cfaacafff2b1474fe030000ffff823311a363000000
            00ffff0300dd388ed1
            """),
        .text("\r\n"),
        .text("0\r\n\r\n"))

    static let test1124 = response(
        .text("HTTP/1.1 200 OK\r\n"),
        .text("Date: Mon, 29 Nov 2024 21:56:53 GMT\r\n"),
        .text("Server: Something-TE-friendly/0.1\r\n"),
        .text("Vary: Accept-Encoding\r\n"),
        .text("Content-Type: text/html; charset=ISO-8859-1\r\n"),
        .text("Transfer-Encoding: gzip, chunked\r\n\r\n"),
        .text("2c\n"),
        .hex(gzipLines),
        .text("\n0\n\n"))

    static let test1125 = response(
        .text("HTTP/1.1 200 OK\r\n"),
        .text("Date: Mon, 29 Nov 2004 21:56:53 GMT\r\n"),
        .text("Server: Apache/1.3.31 (Debian GNU/Linux) mod_gzip/1.3.26.1a PHP/4.3.9-1 mod_ssl/2.8.20 OpenSSL/0.9.7d mod_perl/1.29\r\n"),
        .text("Vary: Accept-Encoding\r\n"),
        .text("Content-Type: text/html; charset=ISO-8859-1\r\n"),
        .text("Transfer-Encoding: gzip, chunked\r\n\r\n"),
        .text("2c\n"),
        .hex(gzipLines),
        .text("\n0\n\n"))

    static let test1617 = response(
        .text("HTTP/1.1 200 OK\r\n"),
        .text("Date: Mon, 29 Nov 2004 21:56:53 GMT\r\n"),
        .text("Server: Apache/1.3.31 (Debian GNU/Linux) mod_gzip/1.3.26.1a PHP/4.3.9-1 mod_ssl/2.8.20 OpenSSL/0.9.7d mod_perl/1.29\r\n"),
        .text("Vary: Accept-Encoding\r\n"),
        .text("Content-Type: text/html; charset=ISO-8859-1\r\n"),
        .text("Transfer-Encoding: gzip, chunked\r\n\r\n"),
        .text("2c\n"),
        .hex(gzipLines),
        .text("\n0\n\n"))

    static let test1277 = response(
        .text("HTTP/1.1 200 OK\r\n"),
        .text("Date: Mon, 29 Nov 2004 21:56:53 GMT\r\n"),
        .text("Server: Apache/1.3.31 (Debian GNU/Linux) mod_gzip/1.3.26.1a PHP/4.3.9-1 mod_ssl/2.8.20 OpenSSL/0.9.7d mod_perl/1.29\r\n"),
        .text("Vary: Accept-Encoding\r\n"),
        .text("Content-Type: text/html; charset=ISO-8859-1\r\n"),
        .text("Transfer-Encoding: gzip, chunked\r\n"),
        .text("Content-Encoding: deflate\r\n\r\n"),
        .text("522\r\n"),
        .hex("""
            1f8b08000781b06302ff010b05f4fa78dadd58db6ee336107d37907f60fdd402b66eb6133970b42872d904cd36c1da05
            ba4f062dd1361b491448cab93cf4db3b942889b11caf7783be04486272e69cc3e10c4993997c7a4a62b4215c50969e75
            5dcbe92292862ca2e9eaac7b33bdebfbfe68dc77bb9f82cee4978bbbf3d9b7fb4b9471f60f09653fa64202104dbf4d67
            975f50772d65766adb4b4ec43a21585a2991f602870f248dec65d2d73cd177aca115c9a80ba25b5a4107a1caa6da4d6f
            4ea3c03d76bd896d184a44842599e3282280188ffdbee3f73d1739c353c73df5c613dbf01b843c531f51e039ceb0ef3a
            7dd7478e77eac1cf40532ac4ab38529c90b958332e8330e7711d8e616fe397791c177084d308c574d1a616101d1e11a1
            963a6749525252822463b500c7fc192d1947614c492afb824604fdf5f516498e53b1848a5a308b46c850de190ca202e1
            7204a55aa97055df258d8938eae44275d418e23995f8c9423712893ccb405fa0ebd9ecbe57fc9df6d015b48f3a5745fb
            e2e67cd643b3cbdb3f2fe1f3f6e277805ddddc5ef68ae13fdfdd5f5f7e85360cf0486288a994ea674cc89e6ee6d00a19
            7ba04414da28cf6286231802965a9e90a899750f65588847c623d584c8d23c5914f6e9f4f6a813122ee99286505730fd
            4138f8982843816a3cc108c5b4201b197b249c44479dc57395a41e926bf266c6abb258479dd91aa808c3ef82a66a3309
            486d9d6a9560069b0e79ce5127c6e92ac72b228a1848baa19ca5090c20404797d0581b1b2a714ce5f35c848c936074e2
            0fadd1c9c4deb26f8133c243900c06967b6c602bf3161ae6f3007b6d6c200b935ed72ccb63cc9bb18e4763886108cb79
            dbd3225403ba03cb775f115e876238ca609cd12bb4110ec7c5b9e15b236762eb8ee999872c075dcfadbcdaf00a530ee2
            0f6a8c3180c81722e4349370448a60a04e87d7a61206a54fc3f55cede5e0822c711ecb896d1a4b18d47f5e1d6019943d
            d879685627a5add68b3db15bac466ccd12f2b6102c60ca4b157578da2643ebd6028da65cbd1c2e0760ada4688dc8e2c5
            3b5c04c05a44d11a91179a1d2e02602da2688d48b8863d4662b63a5caaa668c146a291e55972b82080b594a235221159
            1c2e02602da2688d08134f878b00588b289a512f11a9f3f2076a5612aaba69bab1cc730e691324d0ebb7ea1a85d9881f
            28c94654c5d8084344dd1c0e5751682d53101b9d8472cef8e14a255e6b69b259d7840555ada0597a620a871ca4e0cbcd
            ccfe1b9dc3e90129a379826e4bc7c4ae101aafbea7e49c9398d4996b99e7fafe169c58ae67c105e90df71b6c75af3a39
            76fc518b585db0da1c752fda7d71da052ce762ef9acc04ce5102135e3339976bf8aa869cb54c2512e7126e32a20ea9ec
            57dddaa04f609c5212a3a924297cc3af26b6e96c51a04abbebfeef02af22a28a6c205b74ce6212dc3da684d7b8c25445
            6a9ba1563d615cc9384d688aa5393bc9e18650d4060a5a775a5ecf3bdee71eece5ee73babebf97ebee1d1796c6fea8f7
            badde3e13ef7782fd91feff53a7bddeee83b717f27b0fd910d5a6397f7bbedf2c39ac8e0c9040f31b88ed63ab5f119c9
            e78c9c753909e175a06cea25552fca06676e64470db5cbb193a8ef2de03e19aa62ec74ed641a8fb31675fbe1f6165752
            a93614d8e1ce8e7ed5b7a9df766a95d87aa73588b7f3c68a7b1b8effbfa4393f9db1e1e09d1953efab8f9f28d71b8cdc
            7764ea059e621f3f4b03cf199ebc234bd78426118e3f7ea286c3d1c07b47a2c23e3cf5c5cfe4c9b0e8b3befeaf50d0a9
            9bcd7fc7fe03dd388ed1d3efe8180b050000
            """),
        .text("\r\n"),
        .text("0\r\n\r\n"))

    static let test1482 = response(
        .text("HTTP/1.1 200 funky chunky!\r\n"),
        .text("Server: fakeit/0.9 fakeitbad/1.0\r\n"),
        .text("Transfer-Encoding: chunked, chunked\r\n"),
        .text("Connection: mooo\r\n\r\n"),
        .text("40\r\n"),
        .text("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n"),
        .text("30\r\n"),
        .text("bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\r\n"),
        .text("21;heresatest=moooo\r\n"),
        .text("cccccccccccccccccccccccccccccccc\n\r\n"),
        .text("0\r\n"),
        .text("chunky-trailer: header data\r\n"),
        .text("another-header: yes\r\n\r\n"))

    static let test1483 = response(
        .text("HTTP/1.1 200 funky chunky!\r\n"),
        .text("Server: fakeit/0.9 fakeitbad/1.0\r\n"),
        .text("Transfer-Encoding: chunked\r\n"),
        .text("Transfer-Encoding: chunked\r\n"),
        .text("Connection: mooo\r\n\r\n"),
        .text("40\r\n"),
        .text("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n"),
        .text("30\r\n"),
        .text("bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\r\n"),
        .text("21;heresatest=moooo\r\n"),
        .text("cccccccccccccccccccccccccccccccc\n\r\n"),
        .text("0\r\n"),
        .text("chunky-trailer: header data\r\n"),
        .text("another-header: yes\r\n\r\n"))

    static let test2119 = response(
        .text("HTTP/1.1 200 swsclose OK\n"),
        .text("Content-Length: 6\n"),
        .text("Transfer-Encoding: identityx\n\n"),
        .text("-foo-\n"))
}
