import Foundation

/// Finds the file descriptor behind a caller's file `OutputStream`, which
/// swift-corelibs-foundation does not hand out (CoreFoundation's native-handle
/// property is compiled out on Linux). Needed to truncate the file when a
/// download starts over: seeking back alone leaves the old entity's tail.
///
/// The stream is moved to a random, otherwise meaningless offset (seeking
/// past the end of a file is allowed and writes nothing), and the one
/// descriptor of this process whose position is exactly that offset is the
/// stream's; the position is restored before returning. Only on the writer's
/// queue, only when an output starts over (rare), never on the network thread.
enum FileStreamDescriptor {
    static func find(_ stream: OutputStream) -> Int32? {
        guard let current = (stream.property(forKey: .fileCurrentOffsetKey) as? NSNumber)?.int64Value else { return nil }
        // Between 64 GiB and 4 TiB: below every filesystem's largest file, far
        // past any real download's position.
        let marker = Int64.random(in: (Int64(1) << 36)...(Int64(1) << 42))
        guard stream.setProperty(NSNumber(value: marker), forKey: .fileCurrentOffsetKey) else { return nil }
        defer { _ = stream.setProperty(NSNumber(value: current), forKey: .fileCurrentOffsetKey) }
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return nil }
        let matches = entries.compactMap(Int32.init).filter { lseek($0, 0, SEEK_CUR) == off_t(marker) }
        return matches.count == 1 ? matches[0] : nil
    }
}
