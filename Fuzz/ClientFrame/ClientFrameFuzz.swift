// libFuzzer target: arbitrary bytes as a client frame, as the server reads one from /v1/signal.
//
// Checks, besides not crashing: the flat-JSON fast path agrees with the general decoder on every frame it
// accepts; a send's body, kept escaped as it came, written into a relayed message reads as the same text; a
// decoded frame survives encoding and decoding again unchanged; the oversized-frame head look never reads past
// its scan limit (ASan would say); a frame written in place within its length bound, the relayed message
// included, is the bound's length at most and the bytes the encoder writes.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzClientFrame(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    _ = FrameHeadPeek(text)
    let general = FrameCoding.decodeClientFrameGenerally(text)
    if let fast = FrameFastPath.decodeClientFrame(text) {
        guard case .success(let frame) = general, frame == fast else {
            fatalError("the fast path read \(fast), the general decoder \(general), from \(text.debugDescription)")
        }
        if case .send(let send) = fast {
            let relayed = ServerFrame.message(.init(from: "1", relayBody: send.relayBody, sentAt: 0, messageId: "m"))
            guard case .success(.message(let message)) = FrameCoding.decodeServerFrame(FrameCoding.encode(relayed)),
                message.body == send.body
            else {
                fatalError("the body of \(text.debugDescription) was not relayed as the same text")
            }
            checkWrittenInPlace(relayed, encoded: FrameCoding.encodeUTF8(relayed)) {
                FrameCoding.lengthBound($0)
            } write: {
                FrameCoding.write(relayed, into: $0)
            }
        }
        checkWrittenInPlace(fast, encoded: FrameCoding.encodeUTF8(fast)) {
            FrameCoding.lengthBound($0)
        } write: {
            FrameCoding.write(fast, into: $0)
        }
    }
    if case .success(let frame) = general {
        guard case .success(let again) = FrameCoding.decodeClientFrame(FrameCoding.encode(frame)), again == frame
        else {
            fatalError("\(frame) changed when encoded and decoded again")
        }
    }
    return 0
}

/// `frame`, written into memory of its length bound, is at most that long and is `encoded`'s bytes.
private func checkWrittenInPlace<Frame>(
    _ frame: Frame, encoded: [UInt8], bound: (Frame) -> Int?, write: (UnsafeMutableRawBufferPointer) -> Int
) {
    guard let bound = bound(frame) else { fatalError("\(frame) is a fast frame without a length bound") }
    guard bound >= encoded.count else { fatalError("\(frame) is longer than its bound \(bound)") }
    var memory = [UInt8](repeating: 0, count: bound)
    let written = memory.withUnsafeMutableBytes { write($0) }
    guard Array(memory.prefix(written)) == encoded else { fatalError("\(frame) was written in place differently") }
}
