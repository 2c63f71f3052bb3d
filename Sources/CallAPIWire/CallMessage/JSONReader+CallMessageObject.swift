/// The call message's own use of the tree mode: a top-level object read into a ``CallMessageObject``'s slots.
extension JSONReader {
    /// Parses `text`, which must be one JSON value, as ``parse(_:)`` does, but reads a top-level object's members
    /// into `object`'s slots instead of a dictionary; false when the text is JSON but not an object. It fails on the
    /// same texts as `parse`.
    package static func parseCallObject(_ text: String, into object: inout CallMessageObject) throws(Failure) -> Bool {
        // Filled in place: the object is large, and returning it through a result copied it each time.
        try whole(text) { reader throws(Failure) in
            reader.skipSpace()
            guard reader.index < reader.bytes.count, reader.bytes[reader.index] == UInt8(ascii: "{") else {
                _ = try reader.value(depth: 0)
                return false
            }
            try reader.callObject(into: &object)
            return true
        }
    }

    /// The members of the object at `index`, as the tree mode reads an object's, each under its slot.
    private mutating func callObject(into result: inout CallMessageObject) throws(Failure) {
        let inner = try enter(from: 0)
        skipSpace()
        if take(UInt8(ascii: "}")) { return }
        repeat {
            let key = try callMessageKey()
            try colon()
            let member = try value(depth: inner)
            switch key {
            case .known(let known): result[known] = member
            case .other(let name): result.setOther(name, member)
            }
        } while try next(closing: UInt8(ascii: "}"))
    }

    private enum MemberKey {
        case known(CallMessageKey)
        case other(String)
    }

    /// The key at `index` (after any whitespace): a key the format knows is matched on its bytes in place, without
    /// making a `String`; one with escapes is read as a string and matched on its text.
    private mutating func callMessageKey() throws(Failure) -> MemberKey {
        skipSpace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw Failure() }
        if let key = CallMessageKey(keyAt: index + 1, in: bytes) {
            index += 1 + key.spelling.utf8CodeUnitCount + 1
            return .known(key)
        }
        guard let name = string() else { throw Failure() }
        return CallMessageKey(name: name).map(MemberKey.known) ?? .other(name)
    }
}
