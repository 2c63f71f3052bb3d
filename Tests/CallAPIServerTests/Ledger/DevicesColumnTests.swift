import CallAPISignalProtocol
import Foundation
import Testing

@testable import CallAPIServer
@testable import CallAPIServerCore

/// The `devices` column is written as `JSONEncoder` (sorted keys, slashes unescaped) writes it, and reads back.
@Suite struct DevicesColumnTests {
    static let cases: [[CallDevice]] = [
        [],
        [CallDevice(userId: "1001", session: "s-1", deviceId: nil, ending: "completed")],
        [
            CallDevice(userId: "a\"b\\c/d", session: "\u{01}\n\t", deviceId: "é 😀", ending: "answeredElsewhere"),
            CallDevice(userId: "", session: "", deviceId: "", ending: ""),
        ],
    ]

    @Test(arguments: cases)
    func theColumnIsWhatJSONEncoderWritesAndReadsBack(_ devices: [CallDevice]) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let text = DevicesColumn.text(devices)
        #expect(text == String(decoding: try encoder.encode(devices), as: UTF8.self))
        #expect(try DevicesColumn.devices(text) == devices)
    }
}
