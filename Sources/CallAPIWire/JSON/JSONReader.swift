/// A cursor over JSON text's UTF-8 bytes: the one reader behind both ways of reading JSON here, a whole tree
/// (``parse(_:)``, the call message's reader) and a flat object or a few picked members of one
/// (``FlatJSONObject``, the frame coding's fast path). This file holds what both share: whitespace, literals,
/// strings with their escapes, and plain integers.
///
/// Reading never copies the text: the bytes are the text's own storage, lent for as long as the reader reads.
package struct JSONReader {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0

    init(bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

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
            // Escapes: the string's end is found first, checking each escape, then its contents are unescaped in
            // one pass into a string made at their size. Appending each plain run and each escape to an array, then
            // making the string from it, made a client's decoding of a CallAPI message (which escapes every quote)
            // 19% dearer: 13,232 instructions, not 11,139 (scripts/bench-frame-coding.sh --instructions).
            guard skipRestOfString() else { return nil }
            var contents = JSONReader(bytes: UnsafeBufferPointer(rebasing: bytes[start..<(index - 1)]))
            return contents.checkedContents()
        default:
            return nil  // a raw control character: nothing else stops a plain run
        }
    }

    /// Checks a string as ``string()`` reads it, without building it.
    mutating func skipString() -> Bool {
        take(UInt8(ascii: "\"")) && skipRestOfString()
    }

    /// ``skipString()`` from inside the string, up to and including its closing quote.
    mutating func skipRestOfString() -> Bool {
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

    /// All the bytes as a string's contents (no quotes around them), unescaped, when a reader has already checked
    /// them (``FlatJSONObject/Value/escapedString(_:)``); nil if they are not valid after all.
    ///
    /// Written into a string made once at their size (unescaping only ever shortens text), eight bytes at a time up
    /// to the next backslash: a CallAPI message escapes every quote, so its plain runs are a few bytes long, and
    /// finding each run as a string reader does and appending it cost five times as many instructions
    /// (`scripts/bench-frame-coding.sh --instructions`).
    mutating func checkedContents() -> String? {
        var valid = true
        let text = String(unsafeUninitializedCapacity: bytes.count) { target in
            guard let source = bytes.baseAddress, let out = target.baseAddress else { return 0 }
            // Locals, not `index`, so that the loop keeps its cursors in registers. `written` never passes `read`
            // (an escape is longer than what it stands for), so eight bytes stored at `written` always fit when
            // eight were read at `read`.
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

    /// The scalar of the escape after a backslash; nil for an unknown escape or a lone surrogate.
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

    /// The four hex digits of a `\u` escape.
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
}
