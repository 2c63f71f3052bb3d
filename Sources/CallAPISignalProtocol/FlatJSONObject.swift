import Foundation

/// A JSON object whose members are strings, integers, booleans, null, or objects of those (one level deep), read
/// in one pass over the UTF-8 bytes without Foundation: the fast path of ``FrameCoding`` for the frames sent at
/// high rates, and of the few places that read a CallAPI message.
///
/// It reads only what it is sure of: any other text (arrays, deeper nesting, fractions, exponents, integers beyond
/// `Int64`, duplicate keys, lone surrogates, or anything that is not valid JSON) gives `nil`, and the caller
/// decodes the text the general way, which also explains what is wrong with it.
package struct FlatJSONObject: Equatable {
    /// A member: its key and value.
    package struct Member: Equatable {
        package var key: String
        package var value: Value
    }

    /// A member's value.
    package enum Value: Equatable {
        case string(String)
        /// A string kept as the escaped bytes between its quotes (checked, not unescaped): only for the keys
        /// ``FlatJSONObject/pick(_:fromUTF8:keepingEscaped:)`` is asked to keep so.
        case escapedString([UInt8])
        case int(Int64)
        case bool(Bool)
        case null
        /// A nested object, whose own members are never objects.
        indirect case object(FlatJSONObject)
    }

    /// The members, in the order of the text.
    package private(set) var members: [Member] = []

    /// Reads `text`, or returns nil when it is not a flat object this reader is sure of.
    package init?(_ text: String) {
        var text = text
        guard let members = text.withUTF8({ FlatJSONObject.read($0) }) else { return nil }
        self.members = members
    }

    private init(members: [Member]) {
        self.members = members
    }

    /// The value of `key`, or nil when absent.
    package subscript(key: String) -> Value? {
        // Lengths first: a native string's UTF-8 count is stored, and most keys differ in it.
        let length = key.utf8.count
        for member in members where member.key.utf8.count == length && member.key == key { return member.value }
        return nil
    }

    /// `key` as a string: `.some(nil)` when absent or null, nil when it is something else.
    package func optionalString(_ key: String) -> String?? { self[key].optionalString }

    /// `key` as an integer: `.some(nil)` when absent or null, nil when it is something else or does not fit.
    package func optionalInt(_ key: String) -> Int?? { self[key].optionalInt }

    /// `key` as a boolean: `.some(nil)` when absent or null, nil when it is something else.
    package func optionalBool(_ key: String) -> Bool?? { self[key].optionalBool }

    /// `key` as an object: `.some(nil)` when absent or null, nil when it is something else.
    package func optionalObject(_ key: String) -> FlatJSONObject?? { self[key].optionalObject }

    /// `key` as a string that must be there.
    package func string(_ key: String) -> String? {
        if case .string(let value) = self[key] { value } else { nil }
    }

    /// `key` as an integer that must be there.
    package func int64(_ key: String) -> Int64? {
        if case .int(let value) = self[key] { value } else { nil }
    }

    /// Reads `text` keeping only the values of `keys` (at most 64), in their order: nil where a key is absent.
    /// The other members are checked as ``init(_:)`` checks them but never built, so a reader that needs a few
    /// fields of a large object allocates only for those. Nil for any text ``init(_:)`` refuses, except that a
    /// key outside `keys` may repeat (the general decoder ignores those members too).
    package static func pick(_ keys: JSONKeys, from text: String, keepingEscaped: UInt64 = 0) -> [Value?]? {
        var text = text
        return text.withUTF8 { pick(keys, fromUTF8: $0, keepingEscaped: keepingEscaped) }
    }

    /// ``pick(_:from:)`` over text's bytes, which must be valid UTF-8 (a reader whose bytes come off a socket
    /// checks them first, as ``UTF8Text/isASCII(_:)`` does). The string values of the keys whose bits are set in
    /// `keepingEscaped` (bit n: `keys[n]`) are kept escaped (``Value/escapedString(_:)``), for a reader that copies
    /// them into other JSON as they are.
    package static func pick(
        _ keys: JSONKeys, fromUTF8 bytes: UnsafeBufferPointer<UInt8>, keepingEscaped: UInt64 = 0
    ) -> [Value?]? {
        withPicked(keys, fromUTF8: bytes, keepingEscaped: keepingEscaped) { Array($0) }
    }

    /// ``pick(_:fromUTF8:keepingEscaped:)`` handing the values to `body` in memory on the stack, for a reader on
    /// a hot path: the list of values is the one allocation a picked frame would otherwise make (callgrind: about
    /// 700 instructions per frame with its release). Nil when the text is refused; `body` is not called then.
    ///
    /// `body` may move values out (`values[n].take()`): a string kept in the frame it builds then costs no retain
    /// here and release when the slots are emptied.
    package static func withPicked<Result>(
        _ keys: JSONKeys, fromUTF8 bytes: UnsafeBufferPointer<UInt8>, keepingEscaped: UInt64 = 0,
        _ body: (UnsafeMutableBufferPointer<Value?>) -> Result?
    ) -> Result? {
        return withUnsafeTemporaryAllocation(of: Value?.self, capacity: keys.count) { values in
            values.initialize(repeating: nil)
            // Only the slots a member filled hold anything to release: deinitializing every slot went through the
            // optional's value witness once per key, 14 for a client's frames (a `message` decoded in 6,438
            // instructions, now 6,073; scripts/bench-frame-coding.sh --instructions).
            var filled: UInt64 = 0
            defer {
                while filled != 0, let base = values.baseAddress {
                    (base + filled.trailingZeroBitCount).deinitialize(count: 1)
                    filled &= filled &- 1
                }
            }
            var reader = Reader(bytes: bytes)
            reader.skipSpace()
            guard reader.pickedObject(keys, keepingEscaped: keepingEscaped, into: values, filled: &filled) else {
                return nil
            }
            reader.skipSpace()
            return reader.atEnd ? body(values) : nil
        }
    }

    /// The text of a string's contents that a reader has already checked (``Value/escapedString(_:)``).
    package static func unescape(checkedContents contents: [UInt8]) -> String {
        contents.withUnsafeBufferPointer { bytes in
            var reader = Reader(bytes: bytes)
            guard let text = reader.checkedContents() else {
                preconditionFailure("the contents of a JSON string were not checked before they were kept")
            }
            return text
        }
    }

    private static func read(_ bytes: UnsafeBufferPointer<UInt8>) -> [Member]? {
        var reader = Reader(bytes: bytes)
        reader.skipSpace()
        guard let members = reader.object(nesting: true) else { return nil }
        reader.skipSpace()
        return reader.atEnd ? members : nil
    }

    /// A cursor over the bytes.
    private struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        var atEnd: Bool { index == bytes.count }

        mutating func skipSpace() {
            while index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x09, 0x0A, 0x0D: index += 1
                default: return
                }
            }
        }

        mutating func take(_ byte: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        mutating func take(_ word: StaticString) -> Bool {
            let count = word.utf8CodeUnitCount
            guard bytes.count - index >= count else { return false }
            for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] { return false }
            index += count
            return true
        }

        /// An object's members; `nesting`: whether its values may be objects themselves.
        mutating func object(nesting: Bool) -> [Member]? {
            guard take(UInt8(ascii: "{")) else { return nil }
            var members: [Member] = []
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
                members.append(Member(key: key, value: value))
                skipSpace()
                if take(UInt8(ascii: ",")) { continue }
                return take(UInt8(ascii: "}")) ? members : nil
            }
        }

        /// Reads an object into `values` (nil-initialized, one per key; see ``FlatJSONObject/pick(_:from:)``),
        /// setting bit n of `seen` once `values[n]` holds a value (even when the text is refused later): false when
        /// the text is refused.
        mutating func pickedObject(
            _ keys: JSONKeys, keepingEscaped: UInt64, into values: UnsafeMutableBufferPointer<Value?>,
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
        private mutating func keySlot(in keys: JSONKeys) -> Int?? {
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
        private mutating func skipValue() -> Bool {
            guard index < bytes.count else { return false }
            switch bytes[index] {
            case UInt8(ascii: "\""): return skipString()
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return integer() != nil
            default: return value(nesting: true) != nil
            }
        }

        /// Checks a string as ``string()`` reads it, without building it.
        private mutating func skipString() -> Bool {
            take(UInt8(ascii: "\"")) && skipRestOfString()
        }

        /// ``skipString()`` from inside the string, up to and including its closing quote.
        private mutating func skipRestOfString() -> Bool {
            while true {
                index += JSONPlainRun.length(in: bytes, from: index)
                guard index < bytes.count else { return false }
                switch bytes[index] {
                case UInt8(ascii: "\""):
                    index += 1
                    return true
                case UInt8(ascii: "\\"):
                    index += 1
                    guard escape() != nil else { return false }
                default:
                    return false  // a raw control character: nothing else stops a plain run
                }
            }
        }

        mutating func value(nesting: Bool) -> Value? {
            guard index < bytes.count else { return nil }
            switch bytes[index] {
            case UInt8(ascii: "{"):
                guard nesting, let members = object(nesting: false) else { return nil }
                return .object(FlatJSONObject(members: members))
            case UInt8(ascii: "\""): return string().map(Value.string)
            case UInt8(ascii: "t"): return take("true") ? .bool(true) : nil
            case UInt8(ascii: "f"): return take("false") ? .bool(false) : nil
            case UInt8(ascii: "n"): return take("null") ? .null : nil
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return integer().map(Value.int)
            default: return nil
            }
        }

        /// A plain integer (`-?(0|[1-9][0-9]*)`) that fits `Int64`, and is not followed by a fraction or exponent.
        mutating func integer() -> Int64? {
            let negative = take(UInt8(ascii: "-"))
            let start = index
            var magnitude: UInt64 = 0
            while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
                let (times10, overflow1) = magnitude.multipliedReportingOverflow(by: 10)
                let (sum, overflow2) = times10.addingReportingOverflow(UInt64(bytes[index] - UInt8(ascii: "0")))
                guard !overflow1, !overflow2 else { return nil }
                magnitude = sum
                index += 1
            }
            let digits = index - start
            guard digits > 0, digits == 1 || bytes[start] != UInt8(ascii: "0") else { return nil }
            if index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"): return nil
                default: break
                }
            }
            if negative {
                guard magnitude <= UInt64(Int64.max) + 1 else { return nil }
                return magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude)
            }
            guard magnitude <= UInt64(Int64.max) else { return nil }
            return Int64(magnitude)
        }

        /// A string, unescaped; nil for raw control characters, bad escapes and lone surrogates.
        mutating func string() -> String? {
            guard take(UInt8(ascii: "\"")) else { return nil }
            let start = index
            // Most strings have no escapes: take their bytes whole.
            index += JSONPlainRun.length(in: bytes, from: index)
            guard index < bytes.count else { return nil }
            switch bytes[index] {
            case UInt8(ascii: "\""):
                let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
                index += 1
                return text
            case UInt8(ascii: "\\"):
                // Escapes: the string's end is found first, checking each escape, then its contents are unescaped
                // in one pass into a string made at their size. Appending each plain run and each escape to an
                // array, then making the string from it, made a client's decoding of a CallAPI message (which
                // escapes every quote) 19% dearer: 13,232 instructions, not 11,139
                // (scripts/bench-frame-coding.sh --instructions).
                guard skipRestOfString() else { return nil }
                var contents = Reader(bytes: UnsafeBufferPointer(rebasing: bytes[start..<(index - 1)]))
                return contents.checkedContents()
            default:
                return nil  // a raw control character: nothing else stops a plain run
            }
        }

        /// All the bytes as a string's contents (no quotes around them), unescaped, when a reader has already
        /// checked them (``FlatJSONObject/Value/escapedString(_:)``); nil if they are not valid after all.
        ///
        /// Written into a string made once at their size (unescaping only ever shortens text), eight bytes at a
        /// time up to the next backslash: a CallAPI message escapes every quote, so its plain runs are a few bytes
        /// long, and finding each run as a string reader does and appending it cost five times as many
        /// instructions (`scripts/bench-frame-coding.sh --instructions`).
        mutating func checkedContents() -> String? {
            var valid = true
            let text = String(unsafeUninitializedCapacity: bytes.count) { target in
                guard let source = bytes.baseAddress, let out = target.baseAddress else { return 0 }
                // Locals, not `index`, so that the loop keeps its cursors in registers. `written` never passes
                // `read` (an escape is longer than what it stands for), so eight bytes stored at `written` always
                // fit when eight were read at `read`.
                var read = index
                var written = 0
                let end = bytes.count
                let backslashes: UInt64 = 0x5C5C_5C5C_5C5C_5C5C
                while read < end {
                    if read &+ 8 <= end {
                        let word = UnsafeRawPointer(source + read).loadUnaligned(as: UInt64.self)
                        UnsafeMutableRawPointer(out + written).storeBytes(of: word, as: UInt64.self)
                        // The lowest byte equal to a backslash, exactly (see JSONPlainRun): byte 0 read first.
                        let x = UInt64(littleEndian: word) ^ backslashes
                        let found = (x &- 0x0101_0101_0101_0101) & ~x & 0x8080_8080_8080_8080
                        guard found != 0 else {
                            read &+= 8
                            written &+= 8
                            continue
                        }
                        let run = found.trailingZeroBitCount >> 3
                        read &+= run
                        written &+= run
                    } else if source[read] != UInt8(ascii: "\\") {
                        out[written] = source[read]
                        read &+= 1
                        written &+= 1
                        continue
                    }
                    index = read &+ 1
                    guard let scalar = escape() else {
                        valid = false
                        return 0
                    }
                    read = index
                    if scalar.isASCII {
                        out[written] = UInt8(truncatingIfNeeded: scalar.value)
                        written &+= 1
                    } else {
                        UTF8.encode(scalar) {
                            out[written] = $0
                            written &+= 1
                        }
                    }
                }
                index = read
                return written
            }
            return valid ? text : nil
        }

        /// The scalar of the escape after a backslash.
        private mutating func escape() -> Unicode.Scalar? {
            guard index < bytes.count else { return nil }
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""): return "\""
            case UInt8(ascii: "\\"): return "\\"
            case UInt8(ascii: "/"): return "/"
            case UInt8(ascii: "b"): return "\u{08}"
            case UInt8(ascii: "f"): return "\u{0C}"
            case UInt8(ascii: "n"): return "\n"
            case UInt8(ascii: "r"): return "\r"
            case UInt8(ascii: "t"): return "\t"
            case UInt8(ascii: "u"):
                guard let high = hex4() else { return nil }
                switch high {
                case 0xD800...0xDBFF:
                    guard take("\\u"), let low = hex4(), (0xDC00...0xDFFF).contains(low) else { return nil }
                    return Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
                case 0xDC00...0xDFFF:
                    return nil
                default:
                    return Unicode.Scalar(high)
                }
            default:
                return nil
            }
        }

        private mutating func hex4() -> UInt32? {
            guard bytes.count - index >= 4 else { return nil }
            var value: UInt32 = 0
            for _ in 0..<4 {
                let byte = bytes[index]
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: return nil
                }
                value = value << 4 | UInt32(digit)
                index += 1
            }
            return value
        }
    }
}

/// A member's value as its readers see it: absent (`nil`) and `null` read alike. What ``FlatJSONObject``'s
/// look-ups and the values of ``FlatJSONObject/pick(_:from:)`` both read through.
extension Optional where Wrapped == FlatJSONObject.Value {
    /// A string: `.some(nil)` when absent or null, nil when it is something else.
    package var optionalString: String?? {
        switch self {
        case nil, .null?: .some(nil)
        case .string(let value)?: .some(value)
        case .escapedString(let contents)?: .some(FlatJSONObject.unescape(checkedContents: contents))
        default: nil
        }
    }

    /// A boolean: `.some(nil)` when absent or null, nil when it is something else.
    package var optionalBool: Bool?? {
        switch self {
        case nil, .null?: .some(nil)
        case .bool(let value)?: .some(value)
        default: nil
        }
    }

    /// An object: `.some(nil)` when absent or null, nil when it is something else.
    package var optionalObject: FlatJSONObject?? {
        switch self {
        case nil, .null?: .some(nil)
        case .object(let value)?: .some(value)
        default: nil
        }
    }

    /// An integer: `.some(nil)` when absent or null, nil when it is something else or does not fit `Int`.
    package var optionalInt: Int?? {
        switch self {
        case nil, .null?: .some(nil)
        case .int(let value)?: Int(exactly: value).map { .some($0) }
        default: nil
        }
    }
}
