import Foundation

/// A bound on what a binary property list expands to, checked before
/// Foundation reads it. In the binary format an array, set or dictionary
/// refers to its members by object number, so one container may be referred
/// to many times; corelibs turns the result into Swift values with a copy per
/// reference, so a chain of arrays each holding the previous one twice — 40
/// levels, 203 bytes — expands to 2^40 nodes and exhausts memory. A real
/// plist refers to each container once (Foundation's writer shares only
/// strings, numbers, dates and data), so what it expands to stays within the
/// number of references it holds, which its size bounds.
enum BinaryPropertyListBounds {
    /// Why a binary property list is refused, or nil when it is within
    /// bounds (or is not one: anything else is Foundation's to judge).
    static func problem(in data: Data) -> String? {
        data.withUnsafeBytes { raw -> String? in
            let bytes = raw.bindMemory(to: UInt8.self)
            guard bytes.starts(with: Array("bplist0".utf8)) else { return nil }
            // What this reader cannot follow is refused, not handed on:
            // Foundation reads forms this one does not (wider integers).
            guard bytes.count >= 40, let table = Table(bytes) else {
                return "the binary property list's trailer or offset table is not one this library reads"
            }
            return table.expansionProblem(limit: bytes.count + (1 << 20))
        }
    }

    /// The deepest nesting read: Foundation's reader and its conversion to
    /// Swift values recurse once per level, so a deep chain of one-element
    /// arrays (a few bytes a level) would overflow the stack.
    static let maximumDepth = 512

    /// The trailer and offset table: where each object starts.
    private struct Table {
        let bytes: UnsafeBufferPointer<UInt8>
        let offsetSize: Int
        let referenceSize: Int
        let objectCount: Int
        let top: Int
        let tableStart: Int

        init?(_ bytes: UnsafeBufferPointer<UInt8>) {
            self.bytes = bytes
            let trailer = bytes.count - 32
            offsetSize = Int(bytes[trailer + 6])
            referenceSize = Int(bytes[trailer + 7])
            guard (1...8).contains(offsetSize), (1...8).contains(referenceSize),
                  let count = Table.integer(bytes, at: trailer + 8, size: 8),
                  let top = Table.integer(bytes, at: trailer + 16, size: 8),
                  let start = Table.integer(bytes, at: trailer + 24, size: 8),
                  count > 0, count <= UInt64(bytes.count), top < count,
                  start >= 8, start < UInt64(trailer),
                  count * UInt64(offsetSize) <= UInt64(trailer) - start else { return nil }
            objectCount = Int(count)
            self.top = Int(top)
            tableStart = Int(start)
        }

        /// A big-endian unsigned integer of `size` bytes at `offset`, nil past the end.
        static func integer(_ bytes: UnsafeBufferPointer<UInt8>, at offset: Int, size: Int) -> UInt64? {
            guard offset >= 0, size <= 8, offset <= bytes.count - size else { return nil }
            var value: UInt64 = 0
            for index in offset..<(offset + size) { value = value << 8 | UInt64(bytes[index]) }
            return value
        }

        /// Where object `number` starts, nil when the table points outside.
        func start(of number: Int) -> Int? {
            guard let offset = Table.integer(bytes, at: tableStart + number * offsetSize, size: offsetSize),
                  offset >= 8, offset < UInt64(tableStart) else { return nil }
            return Int(offset)
        }

        /// The object numbers a container at `offset` refers to (empty for a
        /// scalar); nil when it is malformed.
        func members(at offset: Int) -> [Int]? {
            let marker = bytes[offset]
            let kind = marker >> 4
            // Arrays (0xA), ordered sets (0xB), sets (0xC) and dictionaries (0xD, keys and values).
            guard (0xA...0xD).contains(kind) else { return [] }
            var count = Int(marker & 0x0F)
            var position = offset + 1
            if count == 0x0F {
                // The count follows as an integer object: 0x1n, then 2^n bytes.
                guard position < bytes.count, bytes[position] >> 4 == 0x1 else { return nil }
                let size = 1 << Int(bytes[position] & 0x0F)
                guard size <= 8, let value = Table.integer(bytes, at: position + 1, size: size),
                      value <= UInt64(bytes.count) else { return nil }
                count = Int(value)
                position += 1 + size
            }
            let references = kind == 0xD ? count * 2 : count
            guard references <= (bytes.count - position) / referenceSize else { return nil }
            var members: [Int] = []
            members.reserveCapacity(references)
            for index in 0..<references {
                guard let number = Table.integer(bytes, at: position + index * referenceSize, size: referenceSize),
                      number < UInt64(objectCount) else { return nil }
                members.append(Int(number))
            }
            return members
        }

        /// Counts the nodes the top object expands to, each object once
        /// (memoised), without recursion; refuses past `limit`, on a cycle,
        /// and on a malformed container.
        func expansionProblem(limit: Int) -> String? {
            enum Mark { case unvisited, inProgress, counted(Int) }
            var marks = [Mark](repeating: .unvisited, count: objectCount)
            var stack: [(number: Int, members: [Int], next: Int, total: Int)] = []
            func enter(_ number: Int) -> String? {
                guard let offset = start(of: number), let members = members(at: offset) else {
                    return "a container of the binary property list is malformed"
                }
                marks[number] = .inProgress
                stack.append((number, members, 0, 1))
                return nil
            }
            if let problem = enter(top) { return problem }
            while var frame = stack.popLast() {
                if frame.next < frame.members.count {
                    let member = frame.members[frame.next]
                    frame.next += 1
                    switch marks[member] {
                    case .counted(let nodes):
                        frame.total += nodes
                        stack.append(frame)
                    case .inProgress:
                        return "the binary property list refers to a container inside itself"
                    case .unvisited:
                        stack.append(frame)
                        // Foundation reads (and converts) nested containers recursively.
                        guard stack.count < maximumDepth else {
                            return "the binary property list nests containers more than \(maximumDepth) deep"
                        }
                        if let problem = enter(member) { return problem }
                    }
                    if let last = stack.last, last.total > limit { return Table.tooLarge(limit) }
                    continue
                }
                marks[frame.number] = .counted(frame.total)
                guard var parent = stack.popLast() else { break }
                parent.total += frame.total
                guard parent.total <= limit else { return Table.tooLarge(limit) }
                stack.append(parent)
            }
            return nil
        }

        static func tooLarge(_ limit: Int) -> String {
            "the binary property list refers to its containers so many times that it would expand to more than \(limit) values"
        }
    }
}
