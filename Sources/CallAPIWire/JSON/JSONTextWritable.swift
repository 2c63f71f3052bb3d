/// Something written as JSON text into a ``JSONOutput``.
@usableFromInline
package protocol JSONTextWritable {
    /// Writes the same text whatever the output: ``Swift/String/init(jsonText:)`` counts it, then writes it.
    func write<Output: JSONOutput>(to output: inout Output)
}

extension String {
    /// `value`'s JSON text, made with one allocation: written once to count its length, then into the string's
    /// storage.
    @inlinable
    package init(jsonText value: some JSONTextWritable) {
        // Inlinable, so that the writing is specialized for `value`'s type and both outputs in the caller's module.
        var counter = JSONLength()
        value.write(to: &counter)
        let length = counter.count
        self.init(unsafeUninitializedCapacity: length) { memory in
            var output = JSONMemory(UnsafeMutableRawBufferPointer(memory))
            value.write(to: &output)
            precondition(output.written == length, "JSON text of another length than counted")
            return output.written
        }
    }
}
