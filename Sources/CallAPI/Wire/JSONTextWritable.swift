/// Something written as JSON text by a ``JSONTextWriter``.
protocol JSONTextWritable {
    /// Writes the same text whatever the output: ``String/init(jsonText:)`` counts it, then writes it.
    func write<Output: JSONTextOutput>(to writer: inout JSONTextWriter<Output>)
}

extension String {
    /// `value`'s JSON text, made with one allocation: written once to count its length, then into the string's
    /// storage.
    init(jsonText value: some JSONTextWritable) {
        var counter = JSONTextWriter(JSONTextCount())
        value.write(to: &counter)
        let length = counter.output.count
        self.init(unsafeUninitializedCapacity: length) { memory in
            var writer = JSONTextWriter(JSONTextMemory(memory))
            value.write(to: &writer)
            precondition(writer.output.written == length, "JSON text of another length than counted")
            return writer.output.written
        }
    }
}
