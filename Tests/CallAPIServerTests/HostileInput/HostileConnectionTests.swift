import CallAPIServerTesting
#if canImport(Glibc)
    import CallAPISignalProtocol
    import CallAPIServer
    import Testing

    /// Hostile connections over real sockets: half request heads, unmasked and non-UTF-8 frames, a reader that
    /// never reads.
    @Suite struct HostileConnectionTests {
        @Test func aConnectionThatNeverFinishesItsRequestHeadIsClosed() async throws {
            let server = try await TestServer.start { $0.limits.requestTimeoutMillis = 300 }
            let probe = try TCPProbe(port: server.port)
            try probe.write("GET /v1/signal HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websock")
            let outcome = await probe.read(seconds: 10)
            #expect(outcome.closed)
            probe.close()
            try await server.stop()
        }

        @Test func connectionsStillSendingTheirHeadAreCappedAndUsersGetInOnceTheyGo() async throws {
            let server = try await TestServer.start {
                $0.limits.maxUnauthenticated = 4
                $0.limits.requestTimeoutMillis = 60_000
            }
            // Six half heads against a cap of four: whichever the server takes in last, two are closed at once.
            let loris = try (0..<6).map { _ in try TCPProbe(port: server.port) }
            for probe in loris { try probe.write("GET / HTTP/1.1\r\n") }
            var closed = 0
            for probe in loris where await probe.read(seconds: 2).closed { closed += 1 }
            #expect(closed == 2)
            for probe in loris { probe.close() }
            // The slots free up as the half-open connections go.
            var welcomed = false
            for _ in 0..<50 where !welcomed {
                let socket = RawSocket(url: server.url)
                welcomed = (try? await socket.login(try await server.token("1001"))) != nil
                socket.close()
            }
            #expect(welcomed)
            try await server.stop()
        }

        @Test func aRealClientGetsInWhileHalfHeadsFillTheCapAndTheOldestHalfHeadMakesRoom() async throws {
            let server = try await TestServer.start {
                $0.limits.maxUnauthenticated = 4
                $0.limits.requestTimeoutMillis = 60_000
            }
            let loris = try (0..<4).map { _ in try TCPProbe(port: server.port) }
            for probe in loris { try probe.write("GET / HTTP/1.1\r\n") }
            _ = await loris[3].read(seconds: 0.5)  // all four are counted before the real client comes
            // The cap is full and the half heads stay open: a real client still logs in, at its first attempt.
            let socket = RawSocket(url: server.url)
            let welcome = try await socket.login(try await server.token("1001"))
            #expect(welcome.userId == "1001")
            // One half head, the oldest the server counted (the loops take them in no fixed order), made room for it.
            var closed = 0
            for probe in loris where await probe.read(seconds: 1).closed { closed += 1 }
            #expect(closed == 1)
            socket.close()
            for probe in loris { probe.close() }
            try await server.stop()
        }

        @Test(arguments: [SignalProtocol.webSocketPath, ChannelProtocol.webSocketPath])
        func anUnmaskedClientFrameClosesTheConnectionWith1002(path: String) async throws {
            let server = try await TestServer.start()
            let probe = try TCPProbe(port: server.port)
            try await probe.upgrade(path: path)
            try probe.write(TCPProbe.frame(opcode: 0x1, payload: Array("{\"type\":\"ping\"}".utf8), masked: false))
            let outcome = await probe.read(seconds: 10)
            #expect(Array(outcome.bytes.prefix(4)) == [0x88, 0x02, 0x03, 0xEA])
            #expect(outcome.closed)
            probe.close()
            try await server.stop()
        }

        @Test(arguments: [SignalProtocol.webSocketPath, ChannelProtocol.webSocketPath])
        func aTextFrameThatIsNotUTF8ClosesTheConnectionWith1007(path: String) async throws {
            let server = try await TestServer.start()
            let probe = try TCPProbe(port: server.port)
            try await probe.upgrade(path: path)
            try probe.write(TCPProbe.frame(opcode: 0x1, payload: [0x7B, 0xFF, 0xFE, 0x7D]))
            let outcome = await probe.read(seconds: 10) { $0.count >= 4 }
            #expect(outcome.bytes.first == 0x88)
            #expect(Array(outcome.bytes.dropFirst(2).prefix(2)) == [0x03, 0xEF])
            probe.close()
            try await server.stop()
        }

        /// A raw WebSocket client with a 4 KB receive buffer, logged in as `user`, that reads only when told.
        static func slowReader(_ user: String, on server: TestServer) async throws -> TCPProbe {
            let reader = try TCPProbe(port: server.port, receiveBuffer: 4096)
            try await reader.upgrade(path: SignalProtocol.webSocketPath)
            let login = FrameCoding.encode(ClientFrame.login(.init(id: 1, token: try await server.token(user))))
            try reader.write(TCPProbe.frame(opcode: 0x1, payload: Array(login.utf8)))
            _ = await reader.read(seconds: 5) { String(decoding: $0, as: UTF8.self).contains("welcome") }
            return reader
        }

        @Test func aLoggedInReaderThatNeverReadsIsClosedAndTheSenderIsToldWhatItMissed() async throws {
            let server = try await TestServer.start {
                $0.limits.ratePerSecond = 10_000
                $0.limits.burst = 10_000
                $0.limits.maxOutboxBytes = 256 * 1024
            }
            // A reader that logs in, then never reads again.
            let reader = try await Self.slowReader("1002", on: server)
            let sender = try await server.loggedIn("1001")
            let body = String(repeating: "z", count: 60_000)
            var missed: [ServerFrame.HeldResult] = []
            var failed: ServerFrame.Answer?
            // Each send is answered; the reader's overflow comes as `held_result` failures for what it never got,
            // then a failed answer.
            for number in 0..<2000 where failed == nil {
                sender.send(.send(.init(id: number, to: "1002", body: body)))
                answered: while true {
                    switch try await sender.frame(timeout: 10) {
                    case .heldResult(let result) where result.result == .failed: missed.append(result)
                    case .answer(let answer):
                        if answer.result == .failed { failed = answer }
                        break answered
                    default: continue
                    }
                }
            }
            #expect(failed?.reason == .slowConsumer)
            #expect(!missed.isEmpty)
            #expect(missed.allSatisfy { $0.reason == .slowConsumer })
            #expect(server.server.metricsText().contains("callapi_closes_total{reason=\"slow_consumer\"} 1"))
            reader.close()
            try await server.stop()
        }

        @Test func aReaderThatFallsBehindAndCatchesUpIsNeverClosedItsBacklogCountsOnceDrained() async throws {
            let server = try await TestServer.start {
                $0.limits.ratePerSecond = 10_000
                $0.limits.burst = 10_000
                $0.limits.maxOutboxFrames = 1000
                $0.limits.maxOutboxBytes = 16 * 1024 * 1024
            }
            // A reader with a tiny receive buffer (`slowReader`): each round sends it 12 MB, more than the kernel buffers on the
            // way (Linux's largest send buffer is 4 MB), so most of it waits in the server's channel; then the reader
            // reads it all. Three rounds add up to more than its outbox holds, so the reader is closed unless what
            // the server wrote while the socket was backed up is counted once it drains.
            let reader = try await Self.slowReader("1002", on: server)
            let sender = try await server.loggedIn("1001")
            for round in 0..<3 {
                var answers: [ServerFrame.Answer] = []
                for number in 0..<200 {
                    let body = String(repeating: "z", count: 60_000) + "#\(round)-\(number)#"
                    sender.send(.send(.init(id: number, to: "1002", body: body)))
                    while true {
                        guard case .answer(let answer) = try await sender.frame(timeout: 10) else { continue }
                        answers.append(answer)
                        break
                    }
                }
                #expect(answers.allSatisfy { $0.result == .delivered }, "round \(round)")
                let last = Array("#\(round)-199#".utf8)
                let readerClosed = await reader.read(seconds: 60) { bytes in
                    let tail = bytes.suffix(256)
                    return tail.indices.contains { tail[$0...].starts(with: last) }
                }.closed
                #expect(!readerClosed, "round \(round)")
            }
            #expect(!server.server.metricsText().contains("reason=\"slow_consumer\""))
            reader.close()
            try await server.stop()
        }
    }
#endif
