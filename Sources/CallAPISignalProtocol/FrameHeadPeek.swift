/// The `type` and request `id` of an oversized frame, read from its first and last bytes only.
///
/// A frame over the size limit is refused without being parsed (parsing a 1 MiB frame costs far more than
/// refusing it), but the refusal should still say which request it refuses: an `answer` for a `send`, an `error`
/// with the request's `id` otherwise. Encoders write `type` and `id` first or last, so the head or tail of the text
/// usually holds them; when neither does, the refusal goes out without an id. Nothing is allocated beyond the short type string.
public struct FrameHeadPeek: Sendable, Equatable {
    /// How many leading bytes are looked at.
    public static let scanLimit = 512

    /// The value of the first `"type":"…"` pair in the head, if any (at most 32 bytes).
    public var type: String?
    /// The value of the first `"id":<integer>` pair in the head, if any.
    public var requestId: Int?

    /// Reads the head of `text`.
    public init(_ text: String) {
        var text = text
        self = text.withUTF8 { Self(utf8: $0) }
    }

    /// Reads the head of a text's UTF-8 bytes.
    package init(utf8 bytes: UnsafeBufferPointer<UInt8>) {
        var head = Self.read(UnsafeBufferPointer(rebasing: bytes.prefix(Self.scanLimit)))
        // Encoders that write the payload's keys first put `type` last: look at the tail too.
        if head.type == nil || head.requestId == nil, bytes.count > Self.scanLimit {
            let tail = Self.read(UnsafeBufferPointer(rebasing: bytes.suffix(Self.scanLimit)))
            head.type = head.type ?? tail.type
            head.requestId = head.requestId ?? tail.requestId
        }
        self = head
    }

    /// A head with these values.
    public init(type: String?, requestId: Int?) {
        self.type = type
        self.requestId = requestId
    }

    private static func read(_ bytes: UnsafeBufferPointer<UInt8>) -> FrameHeadPeek {
        var type: String?
        var requestId: Int?
        var index = 0
        while index < bytes.count, type == nil || requestId == nil {
            guard bytes[index] == UInt8(ascii: "\"") else {
                index += 1
                continue
            }
            if type == nil, let (value, next) = stringValue(of: "type", in: bytes, at: index) {
                type = value
                index = next
            } else if requestId == nil, let (value, next) = intValue(of: "id", in: bytes, at: index) {
                requestId = value
                index = next
            } else {
                index += 1
            }
        }
        return FrameHeadPeek(type: type, requestId: requestId)
    }

    /// The index just after `"key"` and the colon that follows it, when `bytes` holds them at `index`.
    private static func afterKey(_ key: StaticString, in bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> Int? {
        let keyLength = key.utf8CodeUnitCount
        var cursor = index + 1
        guard cursor + keyLength < bytes.count else { return nil }
        for offset in 0..<keyLength where bytes[cursor + offset] != key.utf8Start[offset] {
            return nil
        }
        cursor += keyLength
        guard bytes[cursor] == UInt8(ascii: "\"") else { return nil }
        cursor = skipSpace(bytes, from: cursor + 1)
        guard cursor < bytes.count, bytes[cursor] == UInt8(ascii: ":") else { return nil }
        return skipSpace(bytes, from: cursor + 1)
    }

    private static func stringValue(of key: StaticString, in bytes: UnsafeBufferPointer<UInt8>, at index: Int)
        -> (String, Int)?
    {
        guard var cursor = afterKey(key, in: bytes, at: index), cursor < bytes.count,
            bytes[cursor] == UInt8(ascii: "\"")
        else { return nil }
        cursor += 1
        let start = cursor
        while cursor < bytes.count, cursor - start <= 32 {
            let byte = bytes[cursor]
            if byte == UInt8(ascii: "\"") {
                return (
                    String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<cursor]), as: UTF8.self), cursor + 1
                )
            }
            // Types are plain ASCII words; anything else (escapes, control bytes) is not a type worth reporting.
            guard byte >= 0x20, byte < 0x7F, byte != UInt8(ascii: "\\") else { return nil }
            cursor += 1
        }
        return nil
    }

    private static func intValue(of key: StaticString, in bytes: UnsafeBufferPointer<UInt8>, at index: Int)
        -> (Int, Int)?
    {
        guard var cursor = afterKey(key, in: bytes, at: index), cursor < bytes.count else { return nil }
        let negative = bytes[cursor] == UInt8(ascii: "-")
        if negative { cursor += 1 }
        var value = 0
        var digits = 0
        while cursor < bytes.count, bytes[cursor] >= UInt8(ascii: "0"), bytes[cursor] <= UInt8(ascii: "9") {
            // Eighteen digits always fit an Int; longer ids are not worth reporting.
            guard digits < 18 else { return nil }
            value = value * 10 + Int(bytes[cursor] - UInt8(ascii: "0"))
            digits += 1
            cursor += 1
        }
        guard digits > 0 else { return nil }
        // A fraction or exponent makes it no integer id.
        if cursor < bytes.count, [UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E")].contains(bytes[cursor]) {
            return nil
        }
        return (negative ? -value : value, cursor)
    }

    private static func skipSpace(_ bytes: UnsafeBufferPointer<UInt8>, from index: Int) -> Int {
        var cursor = index
        while cursor < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[cursor]) { cursor += 1 }
        return cursor
    }
}
