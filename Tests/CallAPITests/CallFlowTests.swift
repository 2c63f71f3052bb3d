import CallAPI
import CallAPITesting
import Testing

@Suite("Call flows between two endpoints")
struct CallFlowTests {
    @Test func videoCallAcceptedThenHungUpEndsBothSidesPrepared() {
        let h = CallHarness()
        let call = h[1].api.probe { $0.call(remoteUserId: 2, completion: $1) }
        #expect(call.succeeded)
        #expect(h[1].api.state == .calling)
        #expect(h[2].api.state == .calling)
        #expect(h[1].api.getCallId() == h[2].api.getCallId())
        #expect(!h[1].api.getCallId().isEmpty)

        let accept = h[2].api.probe { $0.accept(remoteUserId: 1, completion: $1) }
        #expect(accept.succeeded)
        #expect(h[1].api.state == .connected)
        #expect(h[2].api.state == .connected)

        h.clock.advance(byMillis: 5_000)
        let hangup = h[1].api.probe { $0.hangup(remoteUserId: 2, reason: "bye", completion: $1) }
        #expect(hangup.succeeded)
        #expect(h[1].listener.lastState?.state == .prepared)
        #expect(h[1].listener.lastState?.reason == .localHangup)
        #expect(h[2].listener.lastState?.reason == .remoteHangup)
        #expect(h[1].engine.isReleased)
        #expect(h[2].engine.isReleased)
        #expect(h[1].api.getCallId() == "")
        #expect(
            h[2].listener.records.contains(
                .disconnected(roomId: "room-1", hangupUserId: 1, currentUserId: 2, duration: 5_000)))
    }
}
