import Testing

@testable import CallAPISignalClient

/// What the client's socket makes of a server address: host, port, path, TLS, and the upgrade's Host header.
@Suite struct WebSocketTargetTests {
    @Test func aPlainURLWithAPortAndPath() throws {
        let target = try #require(WebSocketTarget("ws://127.0.0.1:8080/v1/signal"))
        #expect(!target.secure && target.host == "127.0.0.1" && target.port == 8080)
        #expect(target.pathAndQuery == "/v1/signal")
        #expect(target.hostHeader == "127.0.0.1:8080")
        #expect(target.serverName == nil)
    }

    @Test func wssDefaultsToPort443AndChecksTheCertificateAgainstTheHostName() throws {
        let target = try #require(WebSocketTarget("wss://calls.example.com/v1/rtc?x=1"))
        #expect(target.secure && target.port == 443 && target.pathAndQuery == "/v1/rtc?x=1")
        #expect(target.hostHeader == "calls.example.com")
        #expect(target.serverName == "calls.example.com")
    }

    @Test func anIPv6LiteralKeepsItsBracketsInTheHostHeaderOnly() throws {
        let target = try #require(WebSocketTarget("ws://[::1]:9000"))
        #expect(target.host == "::1" && target.port == 9000 && target.pathAndQuery == "/")
        #expect(target.hostHeader == "[::1]:9000")
        #expect(target.serverName == nil)
    }

    @Test(arguments: [
        "http://host/v1/signal", "ws://", "ws://host:0/", "ws://host:70000/", "ws://host:x/", "ws://u@host/",
    ])
    func addressesThatAreNotAUsableWebSocketURLAreRefused(_ url: String) {
        #expect(WebSocketTarget(url) == nil)
    }
}
