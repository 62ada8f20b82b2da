/// When the engine gives the C heap's free memory back to the kernel: once it
/// has had no transfer for `quiet`, after transfers ran.
///
/// Why: glibc keeps what a freed response body occupied inside its arenas
/// (one per thread that allocated), and gives back only what sits at the top
/// of one. A process that received large bodies keeps tens of MiB it no longer
/// uses — in `make bench`'s soak, 3,000 bodies of 1 KiB–8 MiB left 50–80 MiB
/// resident that `malloc_trim` gave back. Trimming while transfers run would
/// cost every request (the pages come back as faults); once the engine has
/// been quiet for a second, the work has stopped, and one trim per quiet
/// period is cheap (a few ms, on a utility queue, never the network thread).
///
/// A value the network thread owns: each pass of its loop reports whether a
/// transfer is active, and asks how long it may sleep.
struct IdleHeapTrim {
    /// How long the engine stays without transfers before the trim.
    static let quiet: UInt64 = 1_000_000_000

    private enum State {
        /// No transfer ran since the last trim (or ever): nothing to give back.
        case clean
        /// Transfers are running.
        case busy
        /// The last transfer ended at this time (uptime, ns).
        case quietSince(UInt64)
    }

    private var state = State.clean

    /// The network thread's pass ended; `active`: transfers remain in curl.
    /// Returns true when the heap is to be trimmed now.
    mutating func passEnded(active: Bool, now: @autoclosure () -> UInt64) -> Bool {
        switch (state, active) {
        case (_, true):
            state = .busy
            return false
        case (.clean, false):
            return false
        case (.busy, false):
            state = .quietSince(now())
            return false
        case (.quietSince(let since), false):
            let time = now()
            guard time &- since >= IdleHeapTrim.quiet else { return false }
            state = .clean
            return true
        }
    }

    /// Milliseconds until the trim is due (the thread must wake then), or nil.
    func millisecondsUntilDue(now: @autoclosure () -> UInt64) -> Int? {
        guard case .quietSince(let since) = state else { return nil }
        let elapsed = now() &- since
        return elapsed >= IdleHeapTrim.quiet ? 0 : Int((IdleHeapTrim.quiet - elapsed) / 1_000_000) + 1
    }
}
