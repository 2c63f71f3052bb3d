/// Finds how far a JSON string's bytes run without a byte that JSON must escape: a quote, a backslash or a
/// control character (below 0x20). Everything else, UTF-8 of other characters included, is written as it is.
///
/// Eight bytes are tested at once: every relayed frame's body is scanned when it is read, counted for the outbox
/// and written, and byte by byte those scans took about a tenth of the server's instructions per relayed message
/// (callgrind, docs/benchmarks.md).
package enum JSONPlainRun {
    /// The number of bytes from `start` on, before the first that needs escaping (or the end).
    @inline(__always)
    package static func length(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        guard let base = bytes.baseAddress else { return 0 }
        var index = start
        while index &+ 8 <= bytes.count {
            let word = UInt64(littleEndian: UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self))
            let found = escapeMarks(word)
            // The lowest mark is exact (see escapeMarks), and byte 0 was read first: the run ends there, without
            // testing the word's bytes again one by one (most keys and short strings end in their first word).
            if found != 0 { return index &+ (found.trailingZeroBitCount &>> 3) &- start }
            index &+= 8
        }
        while index < bytes.count, !needsEscape(bytes[index]) {
            index &+= 1
        }
        return index &- start
    }

    /// Whether `byte` must be escaped in a JSON string.
    @inline(__always)
    package static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }

    /// The high bit of each of the eight bytes of `word` that must be escaped, and perhaps of bytes above the
    /// lowest such byte: each test is the classic "has a zero byte" one, `(v - 0x01…) & ~v & 0x80…`, whose borrow
    /// can only mark bytes above one that really is zero or below the bound. So the lowest mark is exact, and there
    /// is a mark exactly when such a byte exists.
    @inline(__always)
    private static func escapeMarks(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        let control = (word &- ones &* 0x20) & ~word & highs
        let quotes = word ^ (ones &* UInt64(UInt8(ascii: "\"")))
        let backslashes = word ^ (ones &* UInt64(UInt8(ascii: "\\")))
        let quote = (quotes &- ones) & ~quotes & highs
        let backslash = (backslashes &- ones) & ~backslashes & highs
        return control | quote | backslash
    }
}
