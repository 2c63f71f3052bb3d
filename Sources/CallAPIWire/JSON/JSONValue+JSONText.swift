/// A ``JSONValue`` as compact JSON with sorted keys (so equal values give equal text): `String(jsonText: value)`.
extension JSONValue: JSONTextWritable {
    @usableFromInline
    package func write<Output: JSONOutput>(to output: inout Output) {
        output.writeValue(self)
    }
}
