import Foundation

/// A JSON value: what call messages and user extensions are made of. `Sendable`, unlike `[String: Any]`.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// Converts a Foundation-style value (`String`, numbers, `Bool`, arrays, dictionaries, `NSNull`).
    /// Returns `nil` for anything JSON cannot carry.
    public init?(any value: Any) {
        switch value {
        case is NSNull: self = .null
        case let v as JSONValue: self = v
        case let v as Bool where !Self.isNumberObject(value): self = .bool(v)
        case let v as Int: self = .int(v)
        case let v as UInt where v <= UInt(Int.max): self = .int(Int(v))
        case let v as Int64: self = .int(Int(v))
        case let v as Int32: self = .int(Int(v))
        case let v as UInt32: self = .int(Int(v))
        case let v as Double: self = .double(v)
        case let v as Float: self = .double(Double(v))
        case let v as String: self = .string(v)
        case let v as [Any]:
            var items: [JSONValue] = []
            for item in v {
                guard let converted = JSONValue(any: item) else { return nil }
                items.append(converted)
            }
            self = .array(items)
        case let v as [String: Any]:
            guard let converted = Self.object(from: v) else { return nil }
            self = .object(converted)
        default: return nil
        }
    }

    /// Converts a `[String: Any]` dictionary; `nil` when a value cannot be carried (see ``invalidKeys(in:)``).
    public static func object(from dictionary: [String: Any]) -> [String: JSONValue]? {
        var result: [String: JSONValue] = [:]
        for (key, value) in dictionary {
            guard let converted = JSONValue(any: value) else { return nil }
            result[key] = converted
        }
        return result
    }

    /// The keys of `dictionary` whose values JSON cannot carry, sorted.
    public static func invalidKeys(in dictionary: [String: Any]) -> [String] {
        dictionary.filter { JSONValue(any: $0.value) == nil }.map(\.key).sorted()
    }

    /// The Foundation-style value: `String`, `Int`, `Double`, `Bool`, `[Any]`, `[String: Any]` or `NSNull`.
    public var anyValue: Any {
        switch self {
        case .null: NSNull()
        case .bool(let v): v
        case .int(let v): v
        case .double(let v): v
        case .string(let v): v
        case .array(let v): v.map(\.anyValue)
        case .object(let v): v.mapValues(\.anyValue)
        }
    }

    @inlinable public var intValue: Int? {
        // Inlinable with only the common case in line: CallAPI reads several integers of every message it receives
        // (`scripts/callgrind_machine.sh`).
        if case .int(let v) = self { return v }
        return wholeDoubleValue
    }

    /// A double that is a whole number in `Int`'s exact range, as an `Int` (``intValue``'s uncommon case).
    @usableFromInline var wholeDoubleValue: Int? {
        if case .double(let v) = self, v == v.rounded(), abs(v) < 9e15 { return Int(v) }
        return nil
    }

    @inlinable public var stringValue: String? {
        if case .string(let v) = self { return v }
        return nil
    }

    @inlinable public var objectValue: [String: JSONValue]? {
        if case .object(let v) = self { return v }
        return nil
    }

    /// On Apple platforms numbers arrive as `NSNumber`, which also casts to `Bool`; tell them apart.
    private static func isNumberObject(_ value: Any) -> Bool {
        #if canImport(ObjectiveC)
            if let number = value as? NSNumber {
                return String(cString: number.objCType) != "c"
            }
        #endif
        return !(value is Bool)
    }
}

extension JSONValue: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let v = try? container.decode(Bool.self) {
            self = .bool(v)
        } else if let v = try? container.decode(Int.self) {
            self = .int(v)
        } else if let v = try? container.decode(Double.self) {
            self = .double(v)
        } else if let v = try? container.decode(String.self) {
            self = .string(v)
        } else if let v = try? container.decode([JSONValue].self) {
            self = .array(v)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let v): try container.encode(v)
        case .int(let v): try container.encode(v)
        case .double(let v): try container.encode(v)
        case .string(let v): try container.encode(v)
        case .array(let v): try container.encode(v)
        case .object(let v): try container.encode(v)
        }
    }
}
