import CallAPISignalProtocol

// The module since issue 43; before, the machines' files were compiled into this bench.
#if canImport(CallAPIServerCore)
    import CallAPIServerCore
#endif

#if canImport(Glibc)
    import Glibc
#endif

func nowNanos() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

func hubRound(iterations: Int) -> Double {
    var limits = HubLimits()
    limits.ratePerSecond = 1e12
    limits.burst = 1_000_000_000
    limits.idleTimeoutMillis = Int64.max / 4
    var hub = HubState(limits: limits)
    let a = SessionID(1)
    let b = SessionID(2)
    for (id, user) in [(a, "1001"), (b, "1002")] {
        _ = hub.handle(.connected(id), now: 0)
        _ = hub.handle(.frame(id, .login(.init(id: 1, token: "t"))), now: 0)
        _ = hub.handle(
            .tokenChecked(id, requestId: 1, purpose: .login, result: .valid(userId: user, expiresAt: Int64.max / 4)),
            now: 0)
        _ = hub.handle(.written(id, frames: 10), now: 0)
    }
    let body = String(repeating: "x", count: 256)
    var sink = 0
    let start = nowNanos()
    for number in 0..<iterations {
        let actions = hub.handle(.frame(a, .send(.init(id: number, to: "1002", body: body))), now: 1)
        sink &+= actions.count
        _ = hub.handle(.written(b, frames: 1), now: 1)
        _ = hub.handle(.written(a, frames: 1), now: 1)
    }
    let elapsed = nowNanos() - start
    precondition(sink == 2 * iterations)
    return Double(elapsed) / Double(iterations)
}

func channelRound(iterations: Int) -> Double {
    var limits = ChannelLimits()
    limits.ratePerSecond = 1_000_000_000
    limits.burst = 1_000_000_000
    var state = ChannelState(limits: limits)
    let now: Int64 = 1_800_000_000_000
    for (id, uid) in [(SessionID(1), UInt(1001)), (SessionID(2), UInt(1002))] {
        _ = state.handle(.connected(id), now: now)
        _ = state.handle(.frame(id, .join(.init(channel: "room", uid: uid, token: "t"))), now: now)
        _ = state.handle(
            .tokenChecked(id, purpose: .join, result: .valid(userId: String(uid), channel: "room", expiresAt: now * 2)),
            now: now)
        _ = state.handle(.written(id, frames: 10), now: now)
    }
    let data = String(repeating: "c", count: 256)
    var sink = 0
    let start = nowNanos()
    for _ in 0..<iterations {
        let actions = state.handle(.frame(SessionID(1), .signal(.init(to: 1002, data: data))), now: now)
        sink &+= actions.count
        _ = state.handle(.written(SessionID(2), frames: 1), now: now)
    }
    let elapsed = nowNanos() - start
    precondition(sink == iterations)
    return Double(elapsed) / Double(iterations)
}

let arguments = CommandLine.arguments
let iterations = arguments.count > 1 ? Int(arguments[1])! : 200_000
let rounds = arguments.count > 2 ? Int(arguments[2])! : 7
let only = arguments.count > 3 ? arguments[3] : "both"
var hubRuns: [Double] = [0]
var channelRuns: [Double] = [0]
if only == "hub" { _ = hubRound(iterations: iterations); exit(0) }
if only == "channel" { _ = channelRound(iterations: iterations); exit(0) }
hubRuns = []
channelRuns = []
for _ in 0..<rounds {
    hubRuns.append(hubRound(iterations: iterations))
    channelRuns.append(channelRound(iterations: iterations))
}
hubRuns.sort()
channelRuns.sort()
print(
    "hub relayed send (handle + 2 written): median \(Int(hubRuns[hubRuns.count / 2])) ns, min \(Int(hubRuns[0])) ns; "
        + "channel signal (handle + written): median \(Int(channelRuns[channelRuns.count / 2])) ns, min \(Int(channelRuns[0])) ns"
)
