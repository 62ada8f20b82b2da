import Glibc
import Synchronization

/// Which thread is the `AFNetworking` network thread, so code that must (or
/// must never) run there can say so with an assertion instead of a comment.
package enum NetworkThread {
    /// The network thread's pthread_t (an integer on Linux), 0 until it runs.
    private static let owner = Atomic<UInt>(0)

    /// Called by the engine as its thread starts.
    static func claim() {
        owner.store(UInt(pthread_self()), ordering: .releasing)
    }

    /// Whether the caller runs on the network thread.
    package static var isCurrent: Bool {
        let thread = owner.load(ordering: .acquiring)
        return thread != 0 && pthread_equal(pthread_t(thread), pthread_self()) != 0
    }

    /// Traps in debug builds unless called on the network thread.
    @inline(__always)
    package static func assertCurrent(file: StaticString = #fileID, line: UInt = #line) {
        assert(isCurrent, "must run on the AFNetworking network thread", file: file, line: line)
    }

    /// Traps in debug builds when called on the network thread: user blocks,
    /// streams, files and storages must never run there.
    @inline(__always)
    package static func assertNotCurrent(file: StaticString = #fileID, line: UInt = #line) {
        assert(!isCurrent, "must not run on the AFNetworking network thread", file: file, line: line)
    }
}
