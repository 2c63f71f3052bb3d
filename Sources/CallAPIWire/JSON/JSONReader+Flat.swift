/// The flat mode of ``JSONReader``: an object whose members are strings, integers, booleans, null, or objects of those
/// (one level deep), read whole (``FlatJSONObject/init(_:)``) or only for a few keys
/// (``FlatJSONObject/withPicked(_:fromUTF8:keepingEscaped:_:)``). Anything else is refused (nil), never guessed.
extension JSONReader {
    /// An object's members; `nesting`: whether its values may be objects themselves.
    mutating func object(nesting: Bool) -> [FlatJSONObject.Member]? {
        guard take(UInt8(ascii: "{")) else { return nil }
        var members: [FlatJSONObject.Member] = []
        members.reserveCapacity(8)
        skipSpace()
        if take(UInt8(ascii: "}")) { return members }
        while true {
            skipSpace()
            guard let key = string() else { return nil }
            let length = key.utf8.count
            for member in members where member.key.utf8.count == length && member.key == key { return nil }
            skipSpace()
            guard take(UInt8(ascii: ":")) else { return nil }
            skipSpace()
            guard let value = value(nesting: nesting) else { return nil }
            members.append(FlatJSONObject.Member(key: key, value: value))
            skipSpace()
            if take(UInt8(ascii: ",")) { continue }
            return take(UInt8(ascii: "}")) ? members : nil
        }
    }

    /// Reads an object into `values` (nil-initialized, one per key; see ``FlatJSONObject/pick(_:from:)``),
    /// setting bit n of `seen` once `values[n]` holds a value (even when the text is refused later): false when
    /// the text is refused.
    mutating func pickedObject(
        _ keys: JSONKeys, keepingEscaped: UInt64, into values: UnsafeMutableBufferPointer<FlatJSONObject.Value?>,
        filled seen: inout UInt64
    ) -> Bool {
        guard take(UInt8(ascii: "{")) else { return false }
        skipSpace()
        if take(UInt8(ascii: "}")) { return true }
        while true {
            skipSpace()
            guard let slot = keySlot(in: keys) else { return false }
            skipSpace()
            guard take(UInt8(ascii: ":")) else { return false }
            skipSpace()
            if let slot {
                guard seen & (1 << slot) == 0 else { return false }
                if keepingEscaped & (1 << slot) != 0, index < bytes.count, bytes[index] == UInt8(ascii: "\"") {
                    let start = index + 1
                    guard skipString() else { return false }
                    values[slot] = .escapedString(Array(UnsafeBufferPointer(rebasing: bytes[start..<(index - 1)])))
                } else {
                    guard let value = value(nesting: true) else { return false }
                    values[slot] = value
                }
                seen |= 1 << slot
            } else {
                guard skipValue() else { return false }
            }
            skipSpace()
            if take(UInt8(ascii: ",")) { continue }
            return take(UInt8(ascii: "}"))
        }
    }

    /// Reads a key: `.some(index)` of it in `keys`, `.some(nil)` for another key, nil when it is not a string.
    /// A key without escapes is compared as its bytes, without building a `String`.
    mutating func keySlot(in keys: JSONKeys) -> Int?? {
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
        let start = index + 1
        let end = start + JSONPlainRun.length(in: bytes, from: start)
        if end < bytes.count, bytes[end] == UInt8(ascii: "\"") {
            index = end + 1
            return .some(keys.slot(of: bytes, from: start, to: end))
        }
        guard let key = string() else { return nil }
        for (slot, wanted) in keys.enumerated() where wanted.description == key { return .some(slot) }
        return .some(nil)
    }

    /// Checks a value as ``value(nesting:)`` reads it, building nothing for strings and numbers.
    mutating func skipValue() -> Bool {
        guard index < bytes.count else { return false }
        switch bytes[index] {
        case UInt8(ascii: "\""): return skipString()
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return integer() != nil
        default: return value(nesting: true) != nil
        }
    }

    mutating func value(nesting: Bool) -> FlatJSONObject.Value? {
        guard index < bytes.count else { return nil }
        switch bytes[index] {
        case UInt8(ascii: "{"):
            guard nesting, let members = object(nesting: false) else { return nil }
            return .object(FlatJSONObject(members: members))
        case UInt8(ascii: "\""): return string().map(FlatJSONObject.Value.string)
        case UInt8(ascii: "t"): return take("true") ? .bool(true) : nil
        case UInt8(ascii: "f"): return take("false") ? .bool(false) : nil
        case UInt8(ascii: "n"): return take("null") ? .null : nil
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return integer().map(FlatJSONObject.Value.int)
        default: return nil
        }
    }
}
