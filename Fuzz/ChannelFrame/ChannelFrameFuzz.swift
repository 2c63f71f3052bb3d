// libFuzzer target: arbitrary bytes as a channel frame, as the server reads one from /v1/rtc (and the RTC
// channel client reads server frames).
//
// Checks, besides not crashing: a decoded frame survives encoding and decoding again unchanged.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzChannelFrame(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    if case .success(let frame) = ChannelFrameCoding.decodeClientFrame(text) {
        guard case .success(let again) = ChannelFrameCoding.decodeClientFrame(ChannelFrameCoding.encode(frame)),
            again == frame
        else {
            fatalError("\(frame) changed when encoded and decoded again")
        }
        if case .join(let join) = frame {
            _ = ChannelProtocol.isValidChannel(join.channel)
        }
    }
    if case .success(let frame) = ChannelFrameCoding.decodeServerFrame(text) {
        guard case .success(let again) = ChannelFrameCoding.decodeServerFrame(ChannelFrameCoding.encode(frame)),
            again == frame
        else {
            fatalError("\(frame) changed when encoded and decoded again")
        }
    }
    return 0
}
