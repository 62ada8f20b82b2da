import Foundation

/// HTTP dates (RFC 9110 §5.6.7), parsed by hand: `DateFormatter` cost more
/// than a cached request itself (17 % of CPU on the default path), and these
/// three fixed formats need no locale.
///
///     Sun, 06 Nov 1994 08:49:37 GMT     IMF-fixdate (what servers must send)
///     Sunday, 06-Nov-94 08:49:37 GMT    obsolete RFC 850 form
///     Sun Nov  6 08:49:37 1994          obsolete asctime() form
enum HTTPDate {
    /// Seconds since 1970 for `text`, or nil when it is not one of the three forms.
    static func parse(_ text: String) -> TimeInterval? {
        var copy = text
        return copy.withUTF8 { bytes in
            var scanner = Scanner(bytes)
            if let comma = bytes.firstIndex(of: UInt8(ascii: ",")) {
                // "Sun, 06 Nov 1994 …" or "Sunday, 06-Nov-94 …": skip the day name.
                scanner.index = comma + 1
                guard scanner.skip(UInt8(ascii: " ")) else { return nil }
                guard let day = scanner.number(digits: 2) else { return nil }
                if scanner.skip(UInt8(ascii: " ")) {
                    guard let month = scanner.month(), scanner.skip(UInt8(ascii: " ")),
                          let year = scanner.number(digits: 4), scanner.skip(UInt8(ascii: " ")),
                          let time = scanner.time(), scanner.skip(UInt8(ascii: " ")), scanner.literal("GMT"), scanner.atEnd else { return nil }
                    return seconds(year: year, month: month, day: day, time: time)
                }
                guard scanner.skip(UInt8(ascii: "-")), let month = scanner.month(), scanner.skip(UInt8(ascii: "-")),
                      let shortYear = scanner.number(digits: 2), scanner.skip(UInt8(ascii: " ")),
                      let time = scanner.time(), scanner.skip(UInt8(ascii: " ")), scanner.literal("GMT"), scanner.atEnd else { return nil }
                // RFC 9110: a two-digit year more than 50 years in the future is in the past century.
                let year = shortYear < 70 ? 2000 + shortYear : 1900 + shortYear
                return seconds(year: year, month: month, day: day, time: time)
            }
            // "Sun Nov  6 08:49:37 1994"
            guard bytes.count >= 24 else { return nil }
            scanner.index = 4
            guard let month = scanner.month(), scanner.skip(UInt8(ascii: " ")) else { return nil }
            _ = scanner.skip(UInt8(ascii: " "))
            guard let day = scanner.number(digits: 1...2), scanner.skip(UInt8(ascii: " ")), let time = scanner.time(),
                  scanner.skip(UInt8(ascii: " ")), let year = scanner.number(digits: 4), scanner.atEnd else { return nil }
            return seconds(year: year, month: month, day: day, time: time)
        }
    }

    /// Seconds since 1970 of a UTC calendar date, or nil when out of range.
    private static func seconds(year: Int, month: Int, day: Int, time: (Int, Int, Int)) -> TimeInterval? {
        guard (1...12).contains(month), (1...31).contains(day), time.0 < 24, time.1 < 60, time.2 < 61 else { return nil }
        // Days from 1970-01-01 of a proleptic Gregorian date (the usual era arithmetic).
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        return TimeInterval(days * 86_400 + time.0 * 3_600 + time.1 * 60 + time.2)
    }

    /// A cursor over the date's bytes.
    private struct Scanner {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

        var atEnd: Bool { index == bytes.count }

        mutating func skip(_ byte: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        /// `text` (letters only) in any case: browsers read `gmt` and `gMT`
        /// as GMT, and a date they honour should not make an answer stale here.
        mutating func literal(_ text: StaticString) -> Bool {
            let count = text.utf8CodeUnitCount
            guard index + count <= bytes.count else { return false }
            for offset in 0..<count where bytes[index + offset] | 0x20 != text.utf8Start[offset] | 0x20 { return false }
            index += count
            return true
        }

        mutating func number(digits: Int) -> Int? { number(digits: digits...digits) }

        mutating func number(digits: ClosedRange<Int>) -> Int? {
            var value = 0, count = 0
            while count < digits.upperBound, index < bytes.count, bytes[index] >= 48, bytes[index] <= 57 {
                value = value * 10 + Int(bytes[index] - 48)
                index += 1
                count += 1
            }
            return digits.contains(count) ? value : nil
        }

        /// "HH:MM:SS"
        mutating func time() -> (Int, Int, Int)? {
            guard let hour = number(digits: 2), skip(UInt8(ascii: ":")), let minute = number(digits: 2), skip(UInt8(ascii: ":")),
                  let second = number(digits: 2) else { return nil }
            return (hour, minute, second)
        }

        /// "Jan" … "Dec" (case-sensitive, as the grammar says) → 1…12.
        mutating func month() -> Int? {
            guard index + 3 <= bytes.count else { return nil }
            // Case-insensitively, as browsers read it ("AUG" is August).
            let key = Int(bytes[index] | 0x20) << 16 | Int(bytes[index + 1] | 0x20) << 8 | Int(bytes[index + 2] | 0x20)
            guard let month = Scanner.months[key] else { return nil }
            index += 3
            return month
        }

        private static let months: [Int: Int] = {
            var table: [Int: Int] = [:]
            for (offset, name) in ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"].enumerated() {
                let utf8 = Array(name.utf8)
                table[Int(utf8[0]) << 16 | Int(utf8[1]) << 8 | Int(utf8[2])] = offset + 1
            }
            return table
        }()
    }
}
