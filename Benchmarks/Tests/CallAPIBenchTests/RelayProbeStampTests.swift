import Testing

@testable import callapi_bench

/// The relay probe reads the step tag and send time from the front of each message, and nothing else.
@Suite("relay probe stamp")
struct RelayProbeStampTests {
    @Test func readsTheTagAndSendTimeBeforeThePadding() throws {
        let stamp = try #require(RelayProbe.stamp("7;1234567890123;xxxx;yy"))
        #expect(stamp.tag == 7)
        #expect(stamp.sentAt == 1_234_567_890_123)
    }

    @Test func readsTheLargestSendTimeAClockGives() throws {
        let stamp = try #require(RelayProbe.stamp("2;9999999999999999999;"))
        #expect(stamp.sentAt == 9_999_999_999_999_999_999)
    }

    @Test(arguments: [
        "", "7", "7;", "7;123", ";123;x", "7;;x", "a;1;x", "7;1a;x", "-1;2;x", "7;99999999999999999999;x",
    ])
    func refusesMessagesThatAreNotProbeMessages(_ message: String) {
        #expect(RelayProbe.stamp(message) == nil)
    }
}
