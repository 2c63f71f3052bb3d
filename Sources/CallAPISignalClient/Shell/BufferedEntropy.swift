#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Random numbers from the kernel's strong source, drawn 256 bytes at a time: what a socket's masking keys come
/// from (RFC 6455 §5.3: chosen anew for each frame, unpredictably).
///
/// `WebSocketMaskingKey.random()` asks the system generator for each key, one `getrandom` system call per frame
/// sent. At 1,000 messages a second, where each message wakes its sender on its own, that call is on the path of
/// every message (docs/benchmarks.md, "Where the 1k gap is"). `getentropy` reads the same source, up to 256 bytes
/// per call, so one call serves 32 frames. The bytes drawn are never shown to anyone before they are used.
struct BufferedEntropy: RandomNumberGenerator {
    /// `getentropy` gives at most 256 bytes per call.
    private static let wordsPerDraw = 32

    private var words: [UInt64]
    /// The first word not yet handed out.
    private var unused: Int

    init() {
        words = Array(repeating: 0, count: Self.wordsPerDraw)
        unused = Self.wordsPerDraw
    }

    mutating func next() -> UInt64 {
        if unused == words.count {
            words.withUnsafeMutableBytes(Self.draw)
            unused = 0
        }
        let word = words[unused]
        unused &+= 1
        return word
    }

    /// Fills `bytes` (at most 256 of them) from the kernel's random source.
    private static func draw(_ bytes: UnsafeMutableRawBufferPointer) {
        // On Apple platforms the system generator is `arc4random_buf`, which makes no system call per number: it
        // fills the buffer there.
        #if canImport(Glibc) || canImport(Musl)
            // It fails only for more than 256 bytes or a bad address, neither of which can happen here; should it
            // fail anyway, the system generator fills the buffer instead.
            if getentropy(bytes.baseAddress, bytes.count) == 0 { return }
        #endif
        var system = SystemRandomNumberGenerator()
        for offset in stride(from: 0, to: bytes.count, by: 8) {
            bytes.storeBytes(of: system.next() as UInt64, toByteOffset: offset, as: UInt64.self)
        }
    }
}
