import Testing

@testable import callapi

/// What the phone does with lines read while it is still connecting.
@Suite struct PhoneStartupInputTests {
    @Test func quitWithNothingBeforeItEndsThePhoneAtOnce() {
        var startup = PhoneStartupInput()
        #expect(startup.line("") == .keepWaiting)
        #expect(startup.line("QUIT") == .quitNow)
        #expect(PhoneStartupInput().endOfInput() == .quitNow)
    }

    @Test func aScriptPipedInWaitsWholeForTheConnection() {
        var startup = PhoneStartupInput()
        for line in ["call 1002", "wait 3", "hangup", "quit"] {
            #expect(startup.line(line) == .keepWaiting)
        }
        #expect(startup.endOfInput() == .keepWaiting)
        #expect(startup.queued == ["call 1002", "wait 3", "hangup", "quit"])
    }
}
