import CallAPIServerTesting
import CallAPISignalClient
import Foundation
import Testing

/// A client estimates the server's clock against its own over the signaling socket (docs/protocol.md, "Clocks").
@Suite struct ClockOffsetTests {
    @Test func aClientWhoseClockIsFiveSecondsAheadFindsTheServerFiveSecondsBehindWithinItsErrorBar() async throws {
        let server = try await TestServer.start()
        let ahead: Int64 = 5_000
        let signal = SignalClient(configuration: .init(url: server.url), logger: quietLogger) {
            Int64((Date().timeIntervalSince1970 * 1000).rounded()) + ahead
        }
        #expect(await signal.clockOffset == nil, "no estimate before a login")
        try await signal.login(token: try await server.token("1001"))
        let offset = try #require(await signal.clockOffset)
        // The server reads its own wall clock (the same as ours, unshifted), rounded to the millisecond.
        #expect(abs(offset.offsetMillis + ahead) <= offset.errorMillis + 1, "\(offset)")
        #expect(offset.samples == 1 && offset.errorMillis < 1_000)
        signal.logout()
        try await server.stop()
    }
}
