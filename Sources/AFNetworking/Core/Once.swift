import Synchronization

/// Lets exactly one caller through: completion handlers handed to user code
/// may be called more than once; only the first call counts.
final class Once: Sendable {
    private let done = Atomic<Bool>(false)

    func claim() -> Bool {
        !done.exchange(true, ordering: .acquiringAndReleasing)
    }
}
