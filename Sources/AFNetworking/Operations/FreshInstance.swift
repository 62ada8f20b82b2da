import Foundation

/// A new instance of an object's own class — a subclass's included — for
/// 2.7's `copy()` and `+manager`, made through `init?(coder:)`: the one
/// initializer every subclass of an `NSSecureCoding` class has. The classes'
/// plain initializers (`init(request:)`, `init(baseURL:)`) stay non-required,
/// as the API declares them, so a subclass may override them with `override
/// init` and add its own without restating them.
enum FreshInstance {
    /// An instance of `type` decoded from an archive `fill` writes (only what
    /// the caller does not set afterwards); nil when its decoding refuses it.
    static func make<T: NSObject & NSCoding>(_ type: T.Type, archiving fill: (NSKeyedArchiver) -> Void) -> T? {
        let archiver = NSKeyedArchiver(requiringSecureCoding: true)
        fill(archiver)
        archiver.finishEncoding()
        guard let unarchiver = try? NSKeyedUnarchiver(forReadingFrom: archiver.encodedData) else { return nil }
        // A key the archive lacks reads as absent, never as a trap.
        unarchiver.decodingFailurePolicy = .setErrorAndReturn
        defer { unarchiver.finishDecoding() }
        return type.init(coder: unarchiver)
    }
}
