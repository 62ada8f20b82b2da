import Foundation

/// The certificates `SecurityPolicy(pinningMode:)` pins by default.
///
/// AFNetworking 2.7 pinned every `.cer` file in its bundle's resources. On Linux
/// the place is `Bundle.main.resourceURL`, which swift-corelibs-foundation
/// resolves for a plain executable to the directory that contains the
/// executable (for `swift run`/`swift test`, `.build/<config>/`); for a real
/// bundle it is the bundle's resources directory. Only that directory itself is
/// scanned (not subdirectories, as 2.7's `inDirectory:@"."`), in file-name order.
/// Unreadable files are skipped; the result is never nil, possibly empty.
enum DefaultPinnedCertificates {
    /// Where the `.cer` files are looked for.
    static var directory: URL? {
        Bundle.main.resourceURL ?? Bundle.main.bundleURL
    }

    /// The DER contents of every `.cer` file in `directory`, read on each call so
    /// certificates deployed next to the executable are picked up.
    static func load() -> [Data] {
        guard let directory else { return [] }
        return certificates(in: directory)
    }

    /// The DER contents of every `.cer` file directly inside `directory`.
    static func certificates(in directory: URL) -> [Data] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names
            .filter { $0.lowercased().hasSuffix(".cer") }
            .sorted()
            .compactMap { name in
                let url = directory.appendingPathComponent(name)
                guard let size = (try? FileManager.default.attributesOfItem(atPath: url.path))?[.size] as? NSNumber,
                      size.intValue <= Certificate.maximumDERSize else { return nil }
                return try? Data(contentsOf: url)
            }
    }
}
