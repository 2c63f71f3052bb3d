/// Writes a ``JSONValue`` as compact JSON with sorted keys (so equal values give equal text).
enum JSONWriter {
    static func write(_ value: JSONValue) -> String {
        String(jsonText: value)
    }
}

extension JSONValue: JSONTextWritable {
    func write<Output: JSONTextOutput>(to writer: inout JSONTextWriter<Output>) {
        writer.value(self)
    }
}
