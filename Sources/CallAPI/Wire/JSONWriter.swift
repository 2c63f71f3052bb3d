/// Writes a ``JSONValue`` as compact JSON with sorted keys (so equal values give equal text).
enum JSONWriter {
    static func write(_ value: JSONValue) -> String {
        var out = ""
        write(value, to: &out)
        return out
    }

    static func write(_ value: JSONValue, to out: inout String) {
        switch value {
        case .null: out += "null"
        case .bool(let v): out += v ? "true" : "false"
        case .int(let v): out += String(v)
        case .double(let v): out += v.isFinite ? "\(v)" : "null"
        case .string(let v): writeString(v, to: &out)
        case .array(let items):
            out += "["
            for (i, item) in items.enumerated() {
                if i > 0 { out += "," }
                write(item, to: &out)
            }
            out += "]"
        case .object(let members):
            out += "{"
            for (i, key) in members.keys.sorted().enumerated() {
                if i > 0 { out += "," }
                writeString(key, to: &out)
                out += ":"
                write(members[key]!, to: &out)
            }
            out += "}"
        }
    }

    static func writeString(_ string: String, to out: inout String) {
        out += "\""
        // Most strings need no escaping: append them whole rather than scalar by scalar.
        guard string.utf8.contains(where: { $0 == 0x22 || $0 == 0x5C || $0 < 0x20 }) else {
            out += string
            out += "\""
            return
        }
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{08}": out += "\\b"
            case "\u{0C}": out += "\\f"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}
