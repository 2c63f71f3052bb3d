import CallAPI
import CallAPISignalClient
import Foundation
import Histogram
import Logging
import NIOConcurrencyHelpers

#if CALLAPI_WEBRTC
    import CallAPIWebRTC
#endif

/// Real media, measured: calls between two users in this process through our server (signaling and RTC
/// channels on loopback) with WebRTC engines, comparing the callee joining the room while it rings with
/// joining only when it accepts. The figure is accept() → both sides connected on a decoded frame.
struct MediaBench {
    struct Settings: Sendable {
        var calls: Int
        var ringMillis: Int
        var type: CallType
    }

    /// One way of joining, measured.
    struct Mode: Codable, Sendable {
        var joinOnRing: Bool
        /// accept() → both sides connected, in microseconds.
        var acceptToConnected: LatencySummary
        var failed: Int
    }

    struct Report: Codable, Sendable {
        var bench = "media"
        var type: String
        var calls: Int
        var ringMillis: Int
        var modes: [Mode]
    }

    let settings: Settings

    func run(log: @Sendable (String) -> Void = { _ in }) async throws -> Report {
        #if CALLAPI_WEBRTC
            if let reason = MediaBench.webrtcUnavailableReason { throw MediaBenchError(reason) }
            let server = try await BenchServer.start()
            var modes: [Mode] = []
            for joinOnRing in [true, false] {
                let caller = try await MediaBenchEndpoint.make(user: 1001, server: server, joinOnRing: joinOnRing)
                let callee = try await MediaBenchEndpoint.make(user: 1002, server: server, joinOnRing: joinOnRing)
                var histogram = Histogram<UInt64>(
                    highestTrackableValue: 60_000_000_000, numberOfSignificantValueDigits: .three)
                var failed = 0
                for index in 1...settings.calls {
                    do {
                        let nanos = try await oneCall(caller, callee)
                        histogram.record(nanos)
                        log("join on \(joinOnRing ? "ring" : "accept") #\(index): \(nanos / 1_000_000) ms")
                    } catch {
                        failed += 1
                        log("join on \(joinOnRing ? "ring" : "accept") #\(index) failed: \(error)")
                        await caller.reset()
                        await callee.reset()
                    }
                }
                await caller.close()
                await callee.close()
                modes.append(
                    Mode(joinOnRing: joinOnRing, acceptToConnected: LatencySummary(nanos: histogram), failed: failed))
            }
            try? await server.stop()
            return Report(
                type: settings.type == .video ? "video" : "audio", calls: settings.calls,
                ringMillis: settings.ringMillis, modes: modes)
        #else
            throw MediaBenchError(MediaBench.webrtcUnavailableReason ?? "no WebRTC engine in this build")
        #endif
    }

    #if CALLAPI_WEBRTC
        /// Rings, waits the ring time, accepts, and returns accept() → both connected in nanoseconds.
        private func oneCall(_ caller: MediaBenchEndpoint, _ callee: MediaBenchEndpoint) async throws -> UInt64 {
            let started = DispatchTime.now().uptimeNanoseconds
            try await caller.api.call(remoteUserId: callee.user, callType: settings.type)
            try await callee.watch.wait(for: .calling, since: started, seconds: 10)
            try await Task.sleep(for: .milliseconds(settings.ringMillis))
            let accepted = DispatchTime.now().uptimeNanoseconds
            try await callee.api.accept(remoteUserId: caller.user)
            let calleeConnected = try await callee.watch.wait(for: .connected, since: accepted, seconds: 20)
            let callerConnected = try await caller.watch.wait(for: .connected, since: accepted, seconds: 20)
            let hungUp = DispatchTime.now().uptimeNanoseconds
            try await caller.api.hangup(remoteUserId: callee.user)
            try await caller.watch.wait(for: .prepared, since: hungUp, seconds: 10)
            try await callee.watch.wait(for: .prepared, since: hungUp, seconds: 10)
            return max(calleeConnected, callerConnected) - accepted
        }
    #endif
}

extension MediaBench {
    /// Why this build cannot run real media, or nil when it can.
    static var webrtcUnavailableReason: String? {
        #if CALLAPI_WEBRTC
            let missing = WebRTCEngine.missingElements
            guard !missing.isEmpty else { return nil }
            return
                "GStreamer elements missing: \(missing.joined(separator: ", ")) (scripts/setup-webrtc.sh installs them)"
        #else
            return "this build has no WebRTC engine (Linux: scripts/setup-webrtc.sh, then build the Benchmarks "
                + "package with CALLAPI_WEBRTC=1)"
        #endif
    }
}

struct MediaBenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

#if CALLAPI_WEBRTC
    /// One user of the media bench: CallAPI, signaling through the bench server, a WebRTC engine on its
    /// RTC channels with per-call tokens.
    struct MediaBenchEndpoint: Sendable {
        let user: UInt
        let api: CallApiImpl
        let signal: SignalClient
        let watch: StateWatch

        static func make(user: UInt, server: BenchServer, joinOnRing: Bool) async throws -> MediaBenchEndpoint {
            var logger = Logger(label: "callapi.bench.media")
            logger.logLevel = .critical
            let signal = SignalClient(configuration: .init(url: server.url), logger: logger)
            try await signal.login(token: try await server.token(String(user)))
            let engine = WebRTCEngine(
                transport: ServerChannelTransport(url: "ws://127.0.0.1:\(server.port)", logger: logger),
                label: "bench-\(user)")
            let api = CallApiImpl()
            let watch = StateWatch(joinOnRing: joinOnRing)
            api.addListener(listener: watch)
            api.initialize(config: CallConfig(userId: user, rtcEngine: engine, signalClient: signal))
            let authority = server.server.authority
            try await api.prepareForCall(
                prepareConfig: PrepareConfig(
                    callTimeoutMillisecond: 60_000,
                    rtcTokenProvider: { channel, uid in
                        try await authority.issue(userId: String(uid), ttlSeconds: 600, channel: channel).token
                    }))
            return MediaBenchEndpoint(user: user, api: api, signal: signal, watch: watch)
        }

        /// Ends whatever call is left after a failure.
        func reset() async {
            if let peer = [UInt(1001), 1002].first(where: { $0 != user }), api.state != .prepared {
                try? await api.hangup(remoteUserId: peer)
                try? await api.cancelCall()
            }
        }

        func close() async {
            await api.deinitialize()
            signal.logout()
        }
    }
#endif

/// Records when each state was last entered (monotonic nanoseconds) and answers `canJoinRtcOnCalling`.
final class StateWatch: CallApiListenerProtocol {
    private let entered = NIOLockedValueBox<[CallStateType: UInt64]>([:])
    private let joinOnRing: Bool

    init(joinOnRing: Bool) { self.joinOnRing = joinOnRing }

    func onCallStateChanged(
        with state: CallStateType, stateReason: CallStateReason, eventReason: String, eventInfo: [String: Any]
    ) {
        let now = DispatchTime.now().uptimeNanoseconds
        entered.withLockedValue { $0[state] = now }
    }

    func canJoinRtcOnCalling(eventInfo: [String: Any]) -> Bool { joinOnRing }

    /// Waits until `state` is entered at or after `since`; returns when it was entered.
    @discardableResult
    func wait(for state: CallStateType, since: UInt64, seconds: Double) async throws -> UInt64 {
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(seconds * 1e9)
        while DispatchTime.now().uptimeNanoseconds < deadline {
            if let at = entered.withLockedValue({ $0[state] }), at >= since { return at }
            try await Task.sleep(for: .milliseconds(1))
        }
        throw MediaBenchError("\(state) not reached within \(seconds) s")
    }
}
