import Foundation

/// Builds the headers every `HTTPRequestSerializer` starts with, as 2.7 does.
enum DefaultHeaders {
    /// `Accept-Language` from the preferred languages, best first, with q-values falling
    /// by 0.1 and the list cut after the entry with q=0.5 (so at most six languages).
    static func acceptLanguage(preferredLanguages: [String] = Locale.preferredLanguages) -> String {
        var components: [String] = []
        for (index, language) in preferredLanguages.prefix(6).enumerated() {
            let tenths = 10 - index
            let q = tenths == 10 ? "1" : "0.\(tenths)"
            components.append("\(language);q=\(q)")
        }
        return components.joined(separator: ", ")
    }

    /// `User-Agent` naming the executable, its version when the bundle knows it, and the OS,
    /// e.g. `afn/1.2 (Linux; Debian GNU/Linux 12 (bookworm))`. Reduced to ASCII because
    /// header values must be.
    static func userAgent(bundle: Bundle = .main, processInfo: ProcessInfo = .processInfo) -> String {
        let info = bundle.infoDictionary ?? [:]
        let name = (info["CFBundleExecutable"] as? String) ?? (info["CFBundleIdentifier"] as? String)
            ?? processInfo.processName
        let version = (info["CFBundleShortVersionString"] as? String) ?? (info["CFBundleVersion"] as? String)
        var agent = name
        if let version = version, !version.isEmpty { agent += "/\(version)" }
        agent += " (Linux; \(processInfo.operatingSystemVersionString))"
        return asciiOnly(agent)
    }

    /// Transliterates to ASCII ("é" → "e") and drops whatever still is not ASCII or is a
    /// control character, which could otherwise split the header.
    static func asciiOnly(_ string: String) -> String {
        // ICU's transliterator maps megabytes of data into the process on
        // first use: only text that is not plain ASCII needs it.
        if string.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { return string }
        let transliterated = string.applyingTransform(StringTransform("Any-Latin; Latin-ASCII"), reverse: false) ?? string
        let scalars = transliterated.unicodeScalars.filter { $0.isASCII && $0.value >= 0x20 && $0.value != 0x7F }
        return String(String.UnicodeScalarView(scalars))
    }
}
