/// The tree mode of ``JSONReader``: any JSON text (RFC 8259) as a ``JSONValue``. Call messages are read this way on
/// every receive; Foundation's decoders either cannot tell booleans from numbers on Linux (JSONSerialization) or are
/// slow for untyped trees (JSONDecoder), hence this one.
extension JSONReader {
    /// Why a text is not read: it is not JSON (or nests deeper than the reader goes).
    package struct Failure: Error {}

    /// The deepest arrays and objects nest.
    static let maxDepth = 64

    /// Call message keys too long for a small string: taking these instances allocates nothing for the key.
    private static let longKeys = [
        "message_timestamp", "fromUserExtension", "cancelCallByInternal", "answeredByDevice", "rejectedByDevice",
        "rejectByInternal",
    ]

    /// Parses one JSON value that makes up the whole of `text`.
    package static func parse(_ text: String) throws(Failure) -> JSONValue {
        try whole(text) { reader throws(Failure) in try reader.value(depth: 0) }
    }

    /// Runs `read` over `text`'s bytes and requires that it used them all (but for trailing whitespace).
    static func whole<Value>(
        _ text: String, _ read: (inout JSONReader) throws(Failure) -> Value
    ) throws(Failure) -> Value {
        var text = text
        let result: Result<Value, Failure> = text.withUTF8 { bytes in
            var reader = JSONReader(bytes: bytes)
            do throws(Failure) {
                let value = try read(&reader)
                reader.skipSpace()
                guard reader.atEnd else { throw Failure() }
                return .success(value)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// The value at `index` (after any whitespace), inside `depth` arrays and objects.
    mutating func value(depth: Int) throws(Failure) -> JSONValue {
        skipSpace()
        guard index < bytes.count else { throw Failure() }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try object(depth: depth)
        case UInt8(ascii: "["): return try array(depth: depth)
        case UInt8(ascii: "\""): return .string(try treeString())
        case UInt8(ascii: "t"): return try literal("true", .bool(true))
        case UInt8(ascii: "f"): return try literal("false", .bool(false))
        case UInt8(ascii: "n"): return try literal("null", .null)
        default: return try number()
        }
    }

    private mutating func literal(_ word: StaticString, _ value: JSONValue) throws(Failure) -> JSONValue {
        guard take(word) else { throw Failure() }
        return value
    }

    private mutating func treeString() throws(Failure) -> String {
        guard let text = string() else { throw Failure() }
        return text
    }

    /// Steps over the `{` or `[` at `index` into one more level: refused past ``maxDepth``.
    mutating func enter(from depth: Int) throws(Failure) -> Int {
        guard depth < Self.maxDepth else { throw Failure() }
        index += 1
        return depth + 1
    }

    /// After a member or an element: true past a `,`, false past the `closing` bracket.
    mutating func next(closing: UInt8) throws(Failure) -> Bool {
        skipSpace()
        if take(UInt8(ascii: ",")) { return true }
        guard take(closing) else { throw Failure() }
        return false
    }

    /// An object key, then the `:` after it. Keys without escapes that a call message spells long are taken as
    /// the one instance of ``longKeys``, compared in place.
    mutating func memberName() throws(Failure) -> String {
        skipSpace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw Failure() }
        let start = index + 1
        let end = start + JSONPlainRun.length(in: bytes, from: start)
        var name: String?
        if end - start >= 16, end < bytes.count, bytes[end] == UInt8(ascii: "\"") {
            let raw = UnsafeBufferPointer(rebasing: bytes[start..<end])
            if let known = Self.longKeys.first(where: { $0.utf8.elementsEqual(raw) }) {
                index = end + 1
                name = known
            }
        }
        let key: String
        if let name {
            key = name
        } else {
            key = try treeString()
        }
        try colon()
        return key
    }

    /// The `:` between a member's key and value.
    mutating func colon() throws(Failure) {
        skipSpace()
        guard take(UInt8(ascii: ":")) else { throw Failure() }
    }

    private mutating func object(depth: Int) throws(Failure) -> JSONValue {
        let inner = try enter(from: depth)
        skipSpace()
        if take(UInt8(ascii: "}")) { return .object([:]) }
        // Room for a call message's fields up front: growing one key at a time reallocates the table four times,
        // which was the largest share of a call's allocations.
        var result = [String: JSONValue](minimumCapacity: 16)
        repeat {
            let key = try memberName()
            result[key] = try value(depth: inner)
        } while try next(closing: UInt8(ascii: "}"))
        return .object(result)
    }

    private mutating func array(depth: Int) throws(Failure) -> JSONValue {
        let inner = try enter(from: depth)
        var result: [JSONValue] = []
        skipSpace()
        if take(UInt8(ascii: "]")) { return .array(result) }
        repeat {
            result.append(try value(depth: inner))
        } while try next(closing: UInt8(ascii: "]"))
        return .array(result)
    }

    /// Any JSON number: an integer that fits `Int`, else a `Double`.
    private mutating func number() throws(Failure) -> JSONValue {
        let start = index
        let negative = take(UInt8(ascii: "-"))
        guard index < bytes.count, isDigit(bytes[index]) else { throw Failure() }
        // The integer part's value, read as it is scanned; it wraps past 18 digits, where it is not used.
        var magnitude = 0
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else {
            while index < bytes.count, isDigit(bytes[index]) {
                magnitude = magnitude &* 10 &+ Int(bytes[index] &- UInt8(ascii: "0"))
                index += 1
            }
        }
        var integral = true
        if take(UInt8(ascii: ".")) {
            integral = false
            guard index < bytes.count, isDigit(bytes[index]) else { throw Failure() }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if take(UInt8(ascii: "e")) || take(UInt8(ascii: "E")) {
            integral = false
            _ = take(UInt8(ascii: "+")) || take(UInt8(ascii: "-"))
            guard index < bytes.count, isDigit(bytes[index]) else { throw Failure() }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        // Up to 18 characters cannot overflow: the value read while scanning, rather than through a String.
        if integral, index - start <= 18 { return .int(negative ? -magnitude : magnitude) }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        if integral, let int = Int(text) { return .int(int) }
        guard let double = Double(text) else { throw Failure() }
        return .double(double)
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
}
