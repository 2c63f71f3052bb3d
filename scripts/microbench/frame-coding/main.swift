// The relayed body's coding cost, per message: compiled by scripts/bench-frame-coding.sh together with
// Sources/CallAPISignalProtocol (one module, so its internal fast path is reachable). Nanoseconds per call.
import CallAPIWire
import Foundation

func nowNanos() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

/// `FRAME_BENCH_ONLY`: run only the measurements whose name contains it; `FRAME_BENCH_COUNT`: calls per
/// measurement. Under callgrind, two counts apart give instructions per call (scripts/bench-frame-coding.sh).
let only = ProcessInfo.processInfo.environment["FRAME_BENCH_ONLY"]
let defaultCount = ProcessInfo.processInfo.environment["FRAME_BENCH_COUNT"].flatMap { Int($0) } ?? 200_000

/// Prints the mean time of `body` over `count` calls, after a warm-up.
func measure(_ name: String, count: Int = defaultCount, _ body: () -> Int) {
    if let only, !name.contains(only) { return }
    var sink = 0
    for _ in 0..<2000 { sink &+= body() }
    let start = nowNanos()
    for _ in 0..<count { sink &+= body() }
    let nanos = Double(nowNanos() - start) / Double(count)
    print(
        name.padding(toLength: 60, withPad: " ", startingAt: 0), String(format: "%7.0f ns", nanos), sink == 42 ? "" : ""
    )
}

// A CallAPI message body is a JSON object carried as a string: every quote in it is escaped on the wire.
let jsonBody =
    "{\"message_action\":1,\"message_version\":\"1.0\",\"message_timestamp\":1763927000123,\"fromUserId\":\"1001\","
    + "\"remoteUserId\":1002,\"callId\":\"6F1C2A9E-3B7D-4C1E-9F2A-0D8B7C6E5A41\",\"fromRoomId\":\"room-1001\","
    + "\"fromUserId2\":\"1001\",\"pad\":\"xxxxxxxxxxxxxxxxxxxx\"}"
let plainBody = String(repeating: "x", count: jsonBody.utf8.count + 20)

func sendText(_ body: String) -> String {
    FrameFastPath.encode(ClientFrame.send(.init(id: 7, to: "1002", body: body)))!
}
let jsonSend = sendText(jsonBody)
let plainSend = sendText(plainBody)
let message = ServerFrame.message(.init(from: "1001", body: jsonBody, sentAt: 1_763_927_000_123, messageId: "m-12345"))
let plainMessage = ServerFrame.message(
    .init(from: "1001", body: plainBody, sentAt: 1_763_927_000_123, messageId: "m-12345"))

print("send frame \(jsonSend.utf8.count) bytes, JSON body \(jsonBody.utf8.count) bytes")
measure("decode a send with a JSON body (unescapes it)") { FrameFastPath.decodeClientFrame(jsonSend) == nil ? 0 : 1 }
measure("decode a send with a same-size plain body") { FrameFastPath.decodeClientFrame(plainSend) == nil ? 0 : 1 }
measure("encode the message with the JSON body (escapes it)") { FrameFastPath.encode(message)!.utf8.count }
measure("encode the message with the plain body") { FrameFastPath.encode(plainMessage)!.utf8.count }
// What the ledger and the push marking do with every relayed body: read it, then look up the fields they use.
let ledgerKeys = [
    "message_action", "message_version", "callId", "fromRoomId", "cancelCallByInternal", "rejectByInternal",
    "hangupReason", "deviceId", "answeredByDevice", "rejectedByDevice",
]
measure("read the JSON body and look up the ledger's 10 fields") {
    guard let object = FlatJSONObject(jsonBody) else { return 0 }
    return ledgerKeys.reduce(0) { $0 + (object[$1] == nil ? 0 : 1) }
}
measure("encode the message with the JSON body, as bytes") { FrameFastPath.encodeUTF8(message)!.count }
let ledgerPicks: JSONKeys = [
    "message_action", "message_version", "callId", "fromRoomId", "cancelCallByInternal", "rejectByInternal",
    "hangupReason", "deviceId", "answeredByDevice", "rejectedByDevice",
]
measure("pick the ledger's 10 fields from the JSON body") {
    FlatJSONObject.pick(ledgerPicks, from: jsonBody).map { $0.reduce(0) { $0 + ($1 == nil ? 0 : 1) } } ?? 0
}
// What a client reads for every message relayed to it, and for every send it made.
let messageText = FrameFastPath.encode(plainMessage)!
let answerText = FrameFastPath.encode(
    ServerFrame.answer(.init(id: 7, result: .delivered, messageId: "m-12345", sessions: 1)))!
measure("decode the message with the plain body (a receiver)") {
    FrameFastPath.decodeServerFrame(messageText) == nil ? 0 : 1
}
let jsonMessageText = FrameFastPath.encode(message)!
measure("decode the message with the JSON body (a receiver)") {
    FrameFastPath.decodeServerFrame(jsonMessageText) == nil ? 0 : 1
}
measure("decode the answer (a sender)") { FrameFastPath.decodeServerFrame(answerText) == nil ? 0 : 1 }
// The server's whole path for a relayed body, both ways in one run: the send decoded, then the message written
// from the body's text (unescaped, then escaped again), or with the body's escaped bytes copied as they came.
func relay(_ sendText: String, copyingBody: Bool) -> Int {
    guard case .send(let send)? = FrameFastPath.decodeClientFrame(sendText) else { return 0 }
    let message =
        copyingBody
        ? ServerFrame.Message(from: "1001", relayBody: send.relayBody, sentAt: 1_763_927_000_123, messageId: "m-12345")
        : ServerFrame.Message(from: "1001", body: send.body, sentAt: 1_763_927_000_123, messageId: "m-12345")
    return FrameFastPath.encodeUTF8(.message(message))!.count
}
measure("relay the JSON body: decode, unescape, escape again, encode") { relay(jsonSend, copyingBody: false) }
measure("relay the JSON body: decode, copy the escaped bytes, encode") { relay(jsonSend, copyingBody: true) }
measure("relay the plain body: decode, unescape, escape again, encode") { relay(plainSend, copyingBody: false) }
measure("relay the plain body: decode, copy the escaped bytes, encode") { relay(plainSend, copyingBody: true) }
// What the ledger does first with every relayed body that may be a call message: build its text.
let keptJSONBody: MessageBody = {
    guard case .send(let send)? = FrameFastPath.decodeClientFrame(jsonSend) else { fatalError("not a send") }
    return send.relayBody
}()
measure("unescape the JSON body kept escaped (the ledger reads its text)") { keptJSONBody.text.utf8.count }
