/// A JSON object whose members are strings, integers, booleans, null, or objects of those (one level deep), read
/// in one pass over the UTF-8 bytes by ``JSONReader``'s flat mode, without Foundation: the fast path of the frame
/// coding for the frames sent at high rates, and of the few places that read a CallAPI message's head
/// (``CallMessageHead``).
///
/// It reads only what it is sure of: any other text (arrays, deeper nesting, fractions, exponents, integers beyond
/// `Int64`, duplicate keys, lone surrogates, or anything that is not valid JSON) gives `nil`, and the caller
/// decodes the text the general way, which also explains what is wrong with it.
@usableFromInline
package struct FlatJSONObject: Equatable {
    /// A member: its key and value.
    package struct Member: Equatable {
        package var key: String
        package var value: Value
    }

    /// A member's value.
    @usableFromInline
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

    init(members: [Member]) {
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
    @inlinable
    package static func withPicked<Result>(
        _ keys: JSONKeys, fromUTF8 bytes: UnsafeBufferPointer<UInt8>, keepingEscaped: UInt64 = 0,
        _ body: (UnsafeMutableBufferPointer<Value?>) -> Result?
    ) -> Result? {
        // Inlinable, so that `body` is specialized and inlined in the caller's module as it was when this reader
        // lived there; the reading itself (``readPicked(_:fromUTF8:keepingEscaped:into:filled:)``) is one call.
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
            guard readPicked(keys, fromUTF8: bytes, keepingEscaped: keepingEscaped, into: values, filled: &filled)
            else { return nil }
            return body(values)
        }
    }

    /// Reads the whole of `bytes` as an object into `values` (see ``withPicked(_:fromUTF8:keepingEscaped:_:)``),
    /// setting bit n of `filled` once `values[n]` holds a value: false when the text is refused.
    @usableFromInline
    package static func readPicked(
        _ keys: JSONKeys, fromUTF8 bytes: UnsafeBufferPointer<UInt8>, keepingEscaped: UInt64,
        into values: UnsafeMutableBufferPointer<Value?>, filled: inout UInt64
    ) -> Bool {
        var reader = JSONReader(bytes: bytes)
        reader.skipSpace()
        guard reader.pickedObject(keys, keepingEscaped: keepingEscaped, into: values, filled: &filled) else {
            return false
        }
        reader.skipSpace()
        return reader.atEnd
    }

    /// The text of a string's contents that a reader has already checked (``Value/escapedString(_:)``).
    @usableFromInline
    package static func unescape(checkedContents contents: [UInt8]) -> String {
        contents.withUnsafeBufferPointer { bytes in
            var reader = JSONReader(bytes: bytes)
            guard let text = reader.checkedContents() else {
                preconditionFailure("the contents of a JSON string were not checked before they were kept")
            }
            return text
        }
    }

    private static func read(_ bytes: UnsafeBufferPointer<UInt8>) -> [Member]? {
        var reader = JSONReader(bytes: bytes)
        reader.skipSpace()
        guard let members = reader.object(nesting: true) else { return nil }
        reader.skipSpace()
        return reader.atEnd ? members : nil
    }
}

/// A member's value as its readers see it: absent (`nil`) and `null` read alike. What ``FlatJSONObject``'s
/// look-ups and the values of ``FlatJSONObject/pick(_:from:)`` both read through.
///
/// Inlinable: the frame decoders in CallAPISignalProtocol read picked members through these, and these calls into
/// this module, with the one that counted the ``JSONKeys``, cost a `send`'s decoding about 70 instructions
/// (`scripts/bench-frame-coding.sh --instructions`).
extension Optional where Wrapped == FlatJSONObject.Value {
    /// A string: `.some(nil)` when absent or null, nil when it is something else.
    @inlinable package var optionalString: String?? {
        switch self {
        case nil, .null?: .some(nil)
        case .string(let value)?: .some(value)
        case .escapedString(let contents)?: .some(FlatJSONObject.unescape(checkedContents: contents))
        default: nil
        }
    }

    /// A boolean: `.some(nil)` when absent or null, nil when it is something else.
    @inlinable package var optionalBool: Bool?? {
        switch self {
        case nil, .null?: .some(nil)
        case .bool(let value)?: .some(value)
        default: nil
        }
    }

    /// An object: `.some(nil)` when absent or null, nil when it is something else.
    @inlinable package var optionalObject: FlatJSONObject?? {
        switch self {
        case nil, .null?: .some(nil)
        case .object(let value)?: .some(value)
        default: nil
        }
    }

    /// An integer: `.some(nil)` when absent or null, nil when it is something else or does not fit `Int`.
    @inlinable package var optionalInt: Int?? {
        switch self {
        case nil, .null?: .some(nil)
        case .int(let value)?: Int(exactly: value).map { .some($0) }
        default: nil
        }
    }
}
