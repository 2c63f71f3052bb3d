/// Checks on a text message's bytes before they become a `String`.
package enum UTF8Text {
    /// Whether every byte of `bytes` is ASCII, tested eight bytes at a time. Nearly every signaling message is
    /// ASCII (JSON with escaped text), and for those the standard library's general UTF-8 validation, which is
    /// not specialized for the buffer and looks up type metadata on each call, cost ~2% of the server's
    /// instructions per relayed message (docs/benchmarks.md).
    @inlinable
    package static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        let highBits: UInt64 = 0x8080_8080_8080_8080
        var index = 0
        var seen: UInt64 = 0
        while index &+ 8 <= bytes.count {
            seen |= UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)
            index &+= 8
        }
        while index < bytes.count {
            seen |= UInt64(bytes[index])
            index &+= 1
        }
        return seen & highBits == 0
    }
}
