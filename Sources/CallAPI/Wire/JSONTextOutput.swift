/// Where ``JSONTextWriter`` puts JSON text. A message is written twice: into a ``JSONTextCount``, which gives
/// its exact length, then into a ``JSONTextMemory`` of that length inside the `String` being made. The text is
/// built in one allocation, not appended to a `String` piece by piece (each append cost ~340 instructions, about a
/// third of the state machine bench's time per call; docs/benchmarks.md).
protocol JSONTextOutput {
    mutating func append(_ bytes: UnsafeRawBufferPointer)
}

/// Counts the bytes written to it.
struct JSONTextCount: JSONTextOutput {
    private(set) var count = 0

    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        count &+= bytes.count
    }
}

/// Memory lent by the caller for as long as text is written into it, at least as long as the text.
struct JSONTextMemory: JSONTextOutput {
    private let memory: UnsafeMutableBufferPointer<UInt8>
    /// The bytes written so far, from the memory's start.
    private(set) var written = 0

    init(_ memory: UnsafeMutableBufferPointer<UInt8>) {
        self.memory = memory
    }

    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        // A precondition: writing past the end would mean the count and the writing disagree.
        precondition(bytes.count <= memory.count &- written, "JSON text longer than counted")
        UnsafeMutableRawPointer(memory.baseAddress.unsafelyUnwrapped + written)
            .copyMemory(from: source, byteCount: bytes.count)
        written &+= bytes.count
    }
}
