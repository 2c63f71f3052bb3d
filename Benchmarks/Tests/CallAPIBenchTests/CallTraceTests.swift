import CallAPI
import Testing

@testable import callapi_bench

/// The trace that explains a failed call in the calls bench.
@Suite("calls bench trace")
struct CallTraceTests {
    @Test func keepsTheLastEntriesOldestFirst() {
        let trace = CallTrace(user: 7)
        let total = CallTrace.capacity + 5
        for index in 0..<total { trace.record("entry \(index)") }
        let lines = trace.lines
        #expect(lines.count == CallTrace.capacity)
        #expect(lines.first?.hasSuffix("entry 5") == true)
        #expect(lines.last?.hasSuffix("entry \(total - 1)") == true)
    }

    @Test func recordsStateChangesAndDebugText() {
        let trace = CallTrace(user: 7)
        trace.onCallStateChanged(with: .calling, stateReason: .none, eventReason: "", eventInfo: [:])
        trace.callDebugInfo(message: "retrying call 3", logLevel: .normal)
        #expect(trace.lines.count == 2)
        #expect(trace.lines[0].contains("state calling"))
        #expect(trace.lines[1].contains("debug retrying call 3"))
    }

    @Test func namesAMessageByItsActionAndCall() {
        let message = #"{"message_action":0,"message_version":"1.0","callId":"abc","fromUserId":1}"#
        #expect(TracedSignalClient.summary(of: message) == "message_action 0 of call abc")
        #expect(TracedSignalClient.summary(of: "not json") == "unreadable (8 bytes)")
        #expect(TracedSignalClient.summary(of: #"{"callId":"abc"}"#) == "unreadable (16 bytes)")
    }
}
