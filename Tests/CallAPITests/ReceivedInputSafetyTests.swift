import CallAPI
import CallAPITesting
import Testing

/// Received values never trap the machine, and a vouched sender id has exactly one spelling.
@Suite("Never trapping on received input")
struct ReceivedInputSafetyTests {
    /// `now - message_timestamp` overflowed for a timestamp near Int64.min, delivered by a channel that does
    /// not vouch for senders; it is now just a very old (stale) call.
    @Test(arguments: [Int64.min, Int64.min + 1, -1])
    func aCallStampedFarInThePastIsStaleNotATrap(_ timestamp: Int64) {
        var driver = MachineDriver(.prepared)
        let call = driver.message(.videoCall, callId: "old") { $0.timestamp = timestamp }
        let actions = driver.receive(text: call.encoded(), from: nil)
        #expect(driver.machine.state == .prepared)
        #expect(actions.onlyLogs)
    }

    @Test func aCallStampedFarInTheFutureRingsWithoutATrap() {
        var driver = MachineDriver(.prepared)
        let call = driver.message(.videoCall, callId: "future") { $0.timestamp = .max }
        driver.receive(text: call.encoded(), from: nil)
        #expect(driver.machine.state == .calling)
    }

    @Test(arguments: [Int64.min, Int64.max])
    func aChannelReceiveTimeAtTheExtremesIsNoTrap(_ receivedAt: Int64) {
        var driver = MachineDriver(.prepared)
        let call = driver.message(.videoCall, callId: "c")
        driver.receive(text: call.encoded(), from: MachineDriver.peerId, receivedAt: receivedAt)
        // Received at Int64.min: older than any timeout. At Int64.max: in the future, so not stale.
        #expect(driver.machine.state == (receivedAt == .min ? .prepared : .calling))
    }

    @Test func aRingTimeoutAtTheTopOfItsRangeIsNoTrap() {
        var driver = MachineDriver(.prepared, config: MachineDriver.prepareConfig(timeout: .max))
        let call = driver.message(.videoCall, callId: "c") { $0.timestamp = .min }
        driver.receive(text: call.encoded(), from: nil)
        #expect(driver.machine.state == .calling)  // no age is past an endless timeout
    }

    /// Through the public API and a channel that does not vouch: the crash the issue reports.
    @Test func theReportedOverflowThroughOnMessageReceiveIsNoTrap() {
        let h = CallHarness()
        let call = CallMessage(
            action: .videoCall, timestamp: .min, messageId: 1, fromUserId: 1, callId: "x", remoteUserId: 2,
            fromRoomId: "room-1")
        h.network.injectWithoutSender(text: call.encoded(), to: 2)
        #expect(h[2].api.state == .prepared)
        #expect(h[2].listener.stateRecords.isEmpty)
    }

    /// `UInt("01001")` is 1001: whoever could get a token for "01001" could act as 1001 in 1001's calls.
    @Test(arguments: ["01001", "+1001", " 1001", "1001 ", "", "1e3", "1_001", "0x3E9", "١٠٠١", "-1001"])
    func aVouchedSenderIdNotInCanonicalDecimalIsRefused(_ id: String) {
        var driver = MachineDriver(.prepared)
        let call = driver.message(.videoCall, callId: "c", from: 1001)
        let actions = driver.handle(.received(text: call.encoded(), sender: SignalSender(userId: id)))
        #expect(driver.machine.state == .prepared)
        #expect(actions.onlyLogs)
    }

    @Test(arguments: ["9223372036854775808", "18446744073709551615", "99999999999999999999"])
    func aVouchedSenderIdBeyondTheWiresRangeIsRefused(_ id: String) {
        var driver = MachineDriver(.prepared)
        let call = driver.message(.videoCall, callId: "c", from: 1001)
        driver.handle(.received(text: call.encoded(), sender: SignalSender(userId: id)))
        #expect(driver.machine.state == .prepared)
    }

    @Test(arguments: ["1001", "0"])
    func aVouchedSenderIdInCanonicalDecimalIsTheSender(_ id: String) {
        var driver = MachineDriver(.prepared)
        let call = driver.message(.videoCall, callId: "c", from: 1001)
        driver.handle(.received(text: call.encoded(), sender: SignalSender(userId: id)))
        #expect(driver.machine.state == .calling)
    }

    /// User ids are JSON integers on the wire: an id past Int.max could not be written, so it is refused.
    @Test func callingAUserIdBeyondTheWiresRangeIsRefused() {
        var driver = MachineDriver(.prepared)
        let actions = driver.handle(.call(remoteUserId: .max, type: .video, extension: nil, callId: "c"))
        #expect(actions.error?.code == .invalidArgument)
        #expect(driver.machine.state == .prepared)
    }

    @Test func initializingWithAUserIdBeyondTheWiresRangeIsRefused() {
        var machine = CallStateMachine()
        let actions = machine.handle(.initialize(userId: .max), now: MachineDriver.start)
        #expect(machine.userId == nil)
        #expect(actions.contains { if case .log(.error, _) = $0 { true } else { false } })
    }
}
