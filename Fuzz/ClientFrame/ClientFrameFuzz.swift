// libFuzzer target: arbitrary bytes as a client frame, as the server reads one from /v1/signal.
//
// Checks, besides not crashing: the flat-JSON fast path agrees with the general decoder on every frame it
// accepts; a send's body, kept escaped as it came, written into a relayed message reads as the same text; a
// decoded frame survives encoding and decoding again unchanged; the oversized-frame head look never reads past
// its scan limit (ASan would say).

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
