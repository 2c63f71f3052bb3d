import CallAPIServerCore
import CallAPISignalProtocol
import CallAPIWire

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The ledger's `devices` column: a call's devices as a JSON array of objects with sorted keys.
///
/// Every saved call is written here, so the text is built without Foundation's encoder (which took about a
/// twentieth of the server's time in the calls bench); reading it back, for history queries, uses `JSONDecoder`.
enum DevicesColumn {
    static func text(_ devices: [CallDevice]) -> String {
        var text = "["
        for (index, device) in devices.enumerated() {
            if index > 0 { text.append(",") }
            var object = JSONObjectWriter(into: [UInt8]())
            object.member("deviceId", device.deviceId)
            object.member("ending", device.ending)
            object.member("session", device.session)
            object.member("userId", device.userId)
            text.append(String(decoding: object.finish(), as: UTF8.self))
        }
        text.append("]")
        return text
    }

    static func devices(_ text: String) throws -> [CallDevice] {
        try JSONDecoder().decode([CallDevice].self, from: Data(text.utf8))
    }
}
