import Foundation

/// An `InputStream` whose bytes are made on demand by `read(_:maxLength:)`
/// (a multipart body, a slice of a file): read by the engine's body pump,
/// never scheduled on a run loop, with no buffer to lend and no properties.
/// Subclasses keep `status` and `error` and implement `open`, `close` and `read`.
class PullInputStream: InputStream {
    var status: Stream.Status = .notOpen
    var error: Error?

    /// An empty stream until a subclass produces bytes (Foundation's
    /// designated initializer for a subclass that overrides reading).
    init() {
        super.init(data: Data())
    }

    override var streamStatus: Stream.Status { status }
    override var streamError: Error? { error }
    override var hasBytesAvailable: Bool { status == .open }

    override func getBuffer(_ buffer: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>,
                            length len: UnsafeMutablePointer<Int>) -> Bool { false }
    override func property(forKey key: Stream.PropertyKey) -> AnyObject? { nil }
    override func setProperty(_ property: AnyObject?, forKey key: Stream.PropertyKey) -> Bool { false }
    override func schedule(in aRunLoop: RunLoop, forMode mode: RunLoop.Mode) {}
    override func remove(from aRunLoop: RunLoop, forMode mode: RunLoop.Mode) {}
}
