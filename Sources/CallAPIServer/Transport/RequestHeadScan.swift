import CallAPIServerCore
/// Watches the first bytes of a connection for the end of its HTTP request head (the blank line after the
/// header fields). A pure byte scanner: the connection guard decides what to do with its answers.
struct RequestHeadScan: Sendable {
    /// The longest head accepted (the HTTP decoder's own limits are of the same order).
    static let maxHeadBytes = 16 * 1024

    enum Outcome: Sendable, Equatable {
        /// The head is not complete yet.
        case incomplete
        /// The head ended.
        case complete
        /// No end within ``maxHeadBytes``.
        case tooLong
    }

    /// Bytes of the head so far.
    private var count = 0
    /// The last bytes seen, newest in the low byte: the head ends when they are "\r\n\r\n".
    private var recent: UInt32 = 0

    /// Adds the next bytes read.
    mutating func scan(_ bytes: some Collection<UInt8>) -> Outcome {
        for byte in bytes {
            count += 1
            recent = recent << 8 | UInt32(byte)
            if recent == 0x0D0A_0D0A { return .complete }
            if count >= Self.maxHeadBytes { return .tooLong }
        }
        return .incomplete
    }
}
