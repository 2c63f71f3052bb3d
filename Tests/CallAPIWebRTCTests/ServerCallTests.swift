import CallAPI
import CallAPISignalClient
import CallAPISignalProtocol
import CallAPITesting
import Foundation
import Testing

@testable import CallAPIWebRTC

// Calls through a real server on loopback: signaling over its WebSocket, media rooms joined through its
// RTC channels with per-call tokens, media peer to peer. Part of the serialized engine suite.
extension WebRTCEngineTests {
    /// One user: CallAPI, a signaling client and a WebRTC engine on the server's channels.
    struct ServerEndpoint {
        let user: UInt
        let api: CallApiImpl
        let signal: SignalClient
        let engine: WebRTCEngine
        let listener: RecordingCallListener
        let states: AsyncStream<CallStateChange>

        func close() async {
            await api.deinitialize()
            signal.logout()
        }
    }

    /// `device` names the user's device to CallAPI and to the engine alike (several devices of one user).
    func serverEndpoint(
        _ user: UInt, on server: MediaServer, remoteView: (any CallCanvas)? = nil, joinOnRing: Bool = true,
        device: String? = nil
    ) async throws -> ServerEndpoint {
        let signal = try await server.signalClient(user)
        let engine = WebRTCEngine(
            transport: ServerChannelTransport(url: server.baseURL), label: "user-\(user)-\(device ?? "")",
            device: device)
        let listener = RecordingCallListener(canJoinRtcOnCalling: joinOnRing)
        let api = CallApiImpl(deviceId: device)
        api.addListener(listener: listener)
        api.initialize(config: CallConfig(userId: user, rtcEngine: engine, signalClient: signal))
        let states = api.stateChanges
        try await api.prepareForCall(
            prepareConfig: PrepareConfig(
                localView: TestCanvas(), remoteView: remoteView ?? TestCanvas(), callTimeoutMillisecond: 30_000,
                rtcTokenProvider: server.tokenProvider))
        return ServerEndpoint(user: user, api: api, signal: signal, engine: engine, listener: listener, states: states)
    }

    /// The caller calls, the callee accepts when it rings; returns both `connected` changes.
    func connect(_ caller: ServerEndpoint, _ callee: ServerEndpoint, type: CallType) async throws -> (
        caller: CallStateChange, callee: CallStateChange
    ) {
        let (callerStates, calleeStates) = (caller.states, callee.states)
        try await caller.api.call(remoteUserId: callee.user, callType: type)
        try await within(20, "the callee ringing") {
            for await change in calleeStates where change.state == .calling { return }
        }
        try await callee.api.accept(remoteUserId: caller.user)
        let calleeConnected = try await within(20, "the callee connected") {
            for await change in calleeStates where change.state == .connected { return change }
            throw TimedOut(what: "callee states ended")
        }
        let callerConnected = try await within(20, "the caller connected") {
            for await change in callerStates where change.state == .connected { return change }
            throw TimedOut(what: "caller states ended")
        }
        return (callerConnected, calleeConnected)
    }

    @Test(arguments: [CallType.video, .audio])
    func callThroughTheServerConnectsOnADecodedFrame(type: CallType) async throws {
        let server = try await MediaServer.start()
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("server-\(UUID().uuidString).png")
            .path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let snapshot = FrameSnapshotCanvas(path: path)
        let caller = try await serverEndpoint(1001, on: server)
        let callee = try await serverEndpoint(1002, on: server, remoteView: snapshot)
        let (callerConnected, calleeConnected) = try await connect(caller, callee, type: type)
        #expect(callerConnected.reason == .recvRemoteFirstFrame)
        #expect(calleeConnected.reason == .recvRemoteFirstFrame)
        // A fresh room named for this call, joined by both with per-call tokens.
        let room = "1001-\(caller.api.getCallId())"
        #expect(await server.server.channelMembers(room) == [1001, 1002])
        if type == .video {
            #expect(try await within(20, "the callee's snapshot") { await snapshot.waitUntilSaved() })
            let image = try #require(PNGCodec.decode(path: path))
            #expect(image.width == 320 && image.height == 240)
            #expect(image.lumaVariance > 100)
            #expect(image.distinctColours >= 7)
        }
        try await caller.api.hangup(remoteUserId: callee.user)
        await caller.close()
        await callee.close()
        try await server.stop()
    }

    @Test func aKickedCalleeHearsAnRTCErrorAndCannotRejoinWhileBarred() async throws {
        let server = try await MediaServer.start()
        let caller = try await serverEndpoint(1001, on: server)
        let callee = try await serverEndpoint(1002, on: server)
        _ = try await connect(caller, callee, type: .audio)
        let room = "1001-\(caller.api.getCallId())"
        let (status, body) = try await server.kick(1002, from: room, barSeconds: 60)
        #expect(status == 200, "\(body)")
        let kicked = ChannelErrorCode.kicked.rawValue
        let heard = await eventually {
            callee.listener.records.contains(.error(.rtcOccurError, .rtc, code: kicked))
        }
        #expect(heard, "\(callee.listener.records)")
        // The app hangs up, as CallAPI's rtcOccurError invites it to.
        try await callee.api.hangup(remoteUserId: caller.user)

        // The same uid is refused while the bar lasts.
        let events = EventRecorder(callee.engine)
        callee.engine.joinChannel(
            room, token: try await server.tokenProvider(room, 1002), uid: 1002, media: .call(.audio))
        let refused = try await events.wait("a refused join") {
            if case .joinFailed = $0 { true } else { false }
        }
        guard case .joinFailed(_, let code, let message) = refused else { return }
        #expect(code == ChannelErrorCode.barred.rawValue)
        #expect(message.contains("second"), "\(message)")
        callee.engine.leaveChannel()
        await caller.close()
        await callee.close()
        try await server.stop()
    }
}

extension WebRTCEngineTests {
    @Test func eachSidesEngineMeasuresTheCallsQualityAndTheReportsCarryItToTheTimeLine() async throws {
        let server = try await MediaServer.start()
        var endpoints: [ServerEndpoint] = []
        var reporters: [CallReporter] = []
        var reports: [AsyncStream<CallReport>] = []
        for user: UInt in [1001, 1002] {
            let signal = try await server.signalClient(user)
            let engine = WebRTCEngine(
                transport: ServerChannelTransport(url: server.baseURL), label: "quality-\(user)",
                qualityIntervalMillis: 300)
            let listener = RecordingCallListener()
            let api = CallApiImpl()
            api.addListener(listener: listener)
            let (stream, continuation) = AsyncStream.makeStream(of: CallReport.self)
            let reporter = CallReporter(api: api, signal: signal, engine: engine) { report, error in
                if error == nil { continuation.yield(report) }
            }
            api.addListener(listener: reporter)
            api.initialize(config: CallConfig(userId: user, rtcEngine: engine, signalClient: signal))
            let states = api.stateChanges
            try await api.prepareForCall(
                prepareConfig: PrepareConfig(
                    localView: TestCanvas(), remoteView: TestCanvas(), callTimeoutMillisecond: 30_000,
                    rtcTokenProvider: server.tokenProvider))
            endpoints.append(
                ServerEndpoint(
                    user: user, api: api, signal: signal, engine: engine, listener: listener, states: states))
            reporters.append(reporter)
            reports.append(stream)
        }
        let (caller, callee) = (endpoints[0], endpoints[1])
        let samples = EventRecorder(caller.engine)
        _ = try await connect(caller, callee, type: .video)
        // Real media for a few periods: each is a measurement of the call's link.
        let measured = await eventually {
            samples.events.count {
                if case .remoteQuality(_, 1002, let quality) = $0, quality.videoKbps > 0 { true } else { false }
            } >= 3
        }
        #expect(measured, "\(samples.events.filter { if case .remoteQuality = $0 { true } else { false } })")
        let callId = caller.api.getCallId()
        try await caller.api.hangup(remoteUserId: 1002)
        var kept: [CallReport] = []
        for stream in reports {
            for await report in stream {
                kept.append(report)
                break
            }
        }
        for report in kept {
            #expect(report.quality.count >= 2, "\(report.quality.count) samples")
            #expect(report.quality.contains { $0.quality.videoKbps > 0 && $0.quality.audioKbps > 0 })
            #expect(report.quality.allSatisfy { $0.quality.problem == nil })
            // Loopback loses nothing.
            #expect(report.quality.allSatisfy { ($0.quality.videoLossPercent ?? 0) == 0 })
        }
        let timeline = try #require(try await server.server.callTimeline(callId))
        #expect(Set(timeline.quality.map(\.lane)).count == 2)
        withExtendedLifetime(reporters) {}
        for endpoint in endpoints { await endpoint.close() }
        try await server.stop()
    }
}
