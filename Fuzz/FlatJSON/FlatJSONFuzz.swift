// libFuzzer target: arbitrary bytes through the flat-JSON reader and the fast path for server frames (what the
// signaling client reads at high rates).
//
// Checks, besides not crashing: the fast path agrees with the general decoder on every frame it accepts, and
// writes every frame it can write byte for byte as the general encoder does.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFlatJSON(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    if let object = FlatJSONObject(text) {
        for member in object.members {
            _ = object.optionalString(member.key)
            _ = object.optionalInt(member.key)
            _ = object.optionalBool(member.key)
        }
    }
    let general = FrameCoding.decodeServerFrameGenerally(text)
    if let fast = FrameFastPath.decodeServerFrame(text) {
        guard case .success(let frame) = general, frame == fast else {
            fatalError("the fast path read \(fast), the general decoder \(general), from \(text.debugDescription)")
        }
    }
    if case .success(let frame) = general, let written = FrameFastPath.encode(frame) {
        guard written == FrameCoding.encodeGenerally(frame) else {
            fatalError("the fast path wrote \(written.debugDescription) for \(frame)")
        }
    }
    return 0
}
