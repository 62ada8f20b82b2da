import AFNetworking
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// libFuzzer entry point for the response serializers and the request-side
// builders. The first input byte picks the target; the rest is its input.
// Every path must end in a value or a thrown error: a crash, a hang (libFuzzer's
// -timeout) or runaway memory (-rss_limit_mb) is a finding.
//
//   make fuzz            (bounded run of every target, as CI does)

private let url = URL(string: "http://127.0.0.1/fuzz")!

private func response(_ contentType: String) -> HTTPURLResponse? {
    HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: ["Content-Type": contentType])
}

private let targets: [(Data) -> Void] = [
    { data in _ = try? JSONResponseSerializer().responseObject(for: response("application/json"), data: data) },
    { data in
        let serializer = JSONResponseSerializer()
        serializer.removesKeysWithNullValues = true
        _ = try? serializer.responseObject(for: response("application/json; charset=utf-16"), data: data)
    },
    { data in _ = try? XMLDocumentResponseSerializer().responseObject(for: response("application/xml"), data: data) },
    { data in
        if let parser = try? XMLParserResponseSerializer().responseObject(for: response("application/xml"), data: data) as? XMLParser {
            _ = parser.parse()
        }
    },
    { data in _ = try? PropertyListResponseSerializer().responseObject(for: response("application/x-plist"), data: data) },
    { data in _ = try? ImageResponseSerializer().responseObject(for: response("image/png"), data: data) },
    { data in _ = try? HTTPResponseSerializer().responseObject(for: response(String(decoding: data.prefix(64), as: UTF8.self)), data: data) },
    { data in
        // Query strings from arbitrary keys and values, nested one level.
        let text = String(decoding: data, as: UTF8.self)
        let parts = text.split(separator: "\u{0}", omittingEmptySubsequences: false).map(String.init)
        var parameters: [String: Any] = [:]
        for (index, part) in parts.enumerated() {
            parameters[part] = index.isMultiple(of: 2) ? part : ["k\(index)": [part, NSNull(), index]]
        }
        _ = try? HTTPRequestSerializer().request(withMethod: "GET", urlString: url.absoluteString, parameters: parameters)
    },
    { data in
        // Multipart names, file names and headers from arbitrary text.
        let text = String(decoding: data, as: UTF8.self)
        _ = try? HTTPRequestSerializer().multipartFormRequest(withMethod: "POST", urlString: url.absoluteString,
                                                              parameters: [text: text]) { form in
            form.appendPart(withFileData: data, name: text, fileName: text, mimeType: text)
            form.appendPart(withHeaders: [text: text], body: data)
        }
    },
]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSerializers(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> Int32 {
    guard count > 0 else { return 0 }
    let selector = Int(bytes[0])
    let input = Data(bytes: bytes + 1, count: count - 1)
    // FUZZ_TARGET pins one target (make fuzz runs each in turn).
    let pinned = ProcessInfo.processInfo.environment["FUZZ_TARGET"].flatMap(Int.init)
    targets[(pinned ?? selector) % targets.count](input)
    return 0
}

// SwiftPM links an executable's entry point as `<module>_main`; hand control
// to libFuzzer's driver from there (its own `main` is then not linked in).
@_silgen_name("LLVMFuzzerRunDriver")
private func runFuzzerDriver(_ argc: UnsafeMutablePointer<Int32>,
                             _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
                             _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> Int32) -> Int32

@_cdecl("afn_fuzz_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    var count = argc
    var arguments = argv
    return runFuzzerDriver(&count, &arguments) { bytes, length in fuzzSerializers(bytes, length) }
}
