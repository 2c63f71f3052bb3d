/// A ``JSONValue`` as compact JSON with sorted keys (so equal values give equal text): `String(jsonText: value)`.
extension JSONValue: JSONTextWritable {
    func write<Output: JSONTextOutput>(to writer: inout JSONTextWriter<Output>) {
        writer.value(self)
    }
}
