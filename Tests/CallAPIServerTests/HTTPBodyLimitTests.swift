import CallAPIServerTesting

#if canImport(Glibc)
    import CallAPIServer
    import Foundation
    import Testing

    /// The admin JSON endpoints read at most `--admin-body-limit` bytes: a larger body is answered 413 with what
    /// the limit is, before it is read whole, whether it declares its length or is chunked.
    @Suite struct HTTPBodyLimitTests {
        static let admin = ["Authorization": "Bearer test-admin-key", "Content-Type": "application/json"]

        @Test(arguments: ["/v1/calls", "/v1/tokens", "/v1/channels/room-1/kick"])
        func aBodyOverTheLimitIsAnswered413WithTheLimit(path: String) async throws {
            let server = try await TestServer.start()
            // A megabyte of valid JSON: it was once read, parsed and acted on.
            let padding = String(repeating: "x", count: 1 << 20)
            let body = "{\"caller\":\"1001\",\"callee\":\"1002\",\"userId\":\"1001\",\"uid\":1,\"pad\":\"\(padding)\"}"
            let (status, answer) = try await httpRequest(
                server.httpBase + path, method: "POST", headers: Self.admin, body: body)
            #expect(status == 413)
            #expect(answer.contains("at most 65536 bytes"))
            try await server.stop()
        }

        @Test func aChunkedBodyIsRefusedOnceItPassesTheLimitAndASmallOneIsRead() async throws {
            let server = try await TestServer.start { $0.adminBodyLimit = 1024 }
            let probe = try TCPProbe(port: server.port)
            try probe.write(
                "POST /v1/calls HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer test-admin-key\r\n"
                    + "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
            let chunk = String(repeating: " ", count: 512)
            for _ in 0..<4 { try probe.write(String(512, radix: 16) + "\r\n" + chunk + "\r\n") }
            let outcome = await probe.read(seconds: 10) { String(decoding: $0, as: UTF8.self).contains("\r\n\r\n") }
            #expect(String(decoding: outcome.bytes, as: UTF8.self).hasPrefix("HTTP/1.1 413"))
            probe.close()
            // Under the limit the body is read: both users are offline.
            let (status, _) = try await httpRequest(
                server.httpBase + "/v1/calls", method: "POST", headers: Self.admin,
                body: "{\"caller\":\"1001\",\"callee\":\"1002\"}")
            #expect(status == 404)
            try await server.stop()
        }

        @Test func theLimitIsASetting() throws {
            let configuration = try ServerSettings.configuration(
                flags: ["admin-body-limit": "4096"], environment: [:])
            #expect(configuration.adminBodyLimit == 4096)
            #expect(try ServerSettings.configuration(flags: [:], environment: [:]).adminBodyLimit == 65536)
            #expect(throws: ServerSettings.InvalidSetting.self) {
                try ServerSettings.configuration(flags: ["admin-body-limit": "10"], environment: [:])
            }
        }
    }
#endif
