// libFuzzer target: arbitrary bytes through the flat-JSON reader and the fast path for server frames (what the
// signaling client reads at high rates).
//
// Checks, besides not crashing: picking members reads what the whole object holds; the fast path agrees with the general decoder on every frame it accepts, and
// writes every frame it can write byte for byte as the general encoder does.

import CallAPIWire

/// Keys the frames and the CallAPI messages use, and short ones the fuzzer finds quickly.
let pickedKeys: JSONKeys = ["type", "body", "id", "callId", "message_action", "a", "b", ""]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFlatJSON(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let picked = FlatJSONObject.pick(pickedKeys, from: text)
    // Keeping "body" escaped accepts the same texts, and its value reads as the same string.
    let keptEscaped = FlatJSONObject.pick(pickedKeys, from: text, keepingEscaped: 1 << 1)
    guard (picked == nil) == (keptEscaped == nil), keptEscaped?[1].optionalString == picked?[1].optionalString else {
        fatalError("keeping body escaped read \(String(describing: keptEscaped)), not \(String(describing: picked))")
    }
    if let object = FlatJSONObject(text) {
        for member in object.members {
            _ = object.optionalString(member.key)
            _ = object.optionalInt(member.key)
            _ = object.optionalBool(member.key)
        }
        // Whatever the whole reading accepts, picking reads too, with the same values.
        guard let picked, picked == pickedKeys.map({ object[$0.description] }) else {
            fatalError(
                "pick read \(String(describing: picked)), the whole object \(object), from \(text.debugDescription)")
        }
    }
    let general = FrameCoding.decodeServerFrameGenerally(text)
    if let fast = FrameFastPath.decodeServerFrame(text) {
        guard case .success(let frame) = general, frame == fast else {
            fatalError("the fast path read \(fast), the general decoder \(general), from \(text.debugDescription)")
        }
    }
    if case .success(let frame) = general, let written = FrameFastPath.encode(frame) {
        guard written == FrameCoding.encodeGenerally(frame), FrameCoding.encodeUTF8(frame) == Array(written.utf8)
        else {
            fatalError("the fast path wrote \(written.debugDescription) for \(frame)")
        }
    }
    return 0
}
