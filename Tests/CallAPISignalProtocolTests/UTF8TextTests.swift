import Testing

@testable import CallAPISignalProtocol

@Suite struct UTF8TextTests {
    /// Every length up to three words, from every start, with one byte of 0x80 or above at each position (and
    /// none): the word test must agree with a byte-by-byte one.
    @Test(arguments: [UInt8(0x80), 0xC3, 0xFF])
    func theASCIICheckAgreesWithAByteByByteCheck(high: UInt8) {
        let plain = (0..<32).map { UInt8(ascii: "!") + UInt8($0 % 90) }
        for start in 0..<8 {
            for length in 0...24 {
                for marked in [nil] + Array(0..<length) {
                    var bytes = plain
                    if let marked { bytes[start + marked] = high }
                    bytes.withUnsafeBufferPointer { all in
                        let slice = UnsafeBufferPointer(rebasing: all[start..<(start + length)])
                        #expect(UTF8Text.isASCII(slice) == slice.allSatisfy { $0 < 0x80 })
                    }
                }
            }
        }
    }
}
