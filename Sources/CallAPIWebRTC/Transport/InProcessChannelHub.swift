import CallAPI
import Dispatch
import Foundation

/// A ``WebRTCChannelTransport`` inside one process: channels are names, members are uids, and signals are
/// handed from one engine to another. For tests and for demos that run both users in one process.
///
/// Each membership gets its events on a serial queue of its own, in the order the hub saw them. A uid
/// joining a channel it is already in replaces its old membership (the old one is removed with code
/// ``replacedCode``, the others see it leave with reason 1 and join again).
public final class InProcessChannelHub: WebRTCChannelTransport {
    /// The code of ``WebRTCChannelEvent/removed(code:message:)`` for a membership replaced by a new join.
    public static let replacedCode = 3

    /// Decides whether `uid` may join `channel` with `token`: `nil` to allow, or the refusal.
    public typealias Authorizer =
        @Sendable (_ channel: String, _ uid: UInt, _ token: String) -> (
            code: Int, message: String
        )?

    private struct Member: Sendable {
        let membership: Membership
        /// When it joined, as a count of the hub's joins: a joiner learns the members in join order, as from our
        /// server's RTC channels.
        let joinNumber: Int
    }

    private struct State: Sendable {
        var channels: [String: [UInt: Member]] = [:]
        var joins = 0
    }

    private let state = Locked(State())
    private let authorize: Authorizer

    /// A hub that lets everyone in unless `authorize` refuses.
    public init(authorize: @escaping Authorizer = { _, _, _ in nil }) {
        self.authorize = authorize
    }

    /// The uids in `channel`, sorted.
    public func members(of channel: String) -> [UInt] {
        state.withLock { ($0.channels[channel] ?? [:]).keys.sorted() }
    }

    /// Removes `uid` from `channel` as a server would when kicking it: it gets
    /// ``WebRTCChannelEvent/removed(code:message:)``, the others see it leave with reason `leftReason`.
    public func remove(uid: UInt, from channel: String, code: Int, message: String, leftReason: Int = 0) {
        state.withLock { state in
            guard let member = state.channels[channel]?.removeValue(forKey: uid) else { return }
            if state.channels[channel]?.isEmpty == true { state.channels[channel] = nil }
            member.membership.deliver(.removed(code: code, message: message))
            member.membership.deactivate()
            for other in (state.channels[channel] ?? [:]).values {
                other.membership.deliver(.memberLeft(uid: uid, reason: leftReason))
            }
        }
    }

    /// `uid` vanishes from `channel` without a word, as when its process dies: the others see it leave
    /// with reason 1; its own membership hears nothing more.
    public func drop(uid: UInt, from channel: String) {
        state.withLock { state in
            guard let member = state.channels[channel]?.removeValue(forKey: uid) else { return }
            if state.channels[channel]?.isEmpty == true { state.channels[channel] = nil }
            member.membership.deactivate()
            for other in (state.channels[channel] ?? [:]).values {
                other.membership.deliver(.memberLeft(uid: uid, reason: 1))
            }
        }
    }

    // MARK: - WebRTCChannelTransport

    public func join(
        channel: String, token: String, uid: UInt, events: @escaping @Sendable (WebRTCChannelEvent) -> Void
    ) -> any WebRTCChannelMembership {
        let membership = Membership(hub: self, channel: channel, uid: uid, events: events)
        if let refusal = authorize(channel, uid, token) {
            membership.deliver(.joinFailed(code: refusal.code, message: refusal.message))
            membership.deactivate()
            return membership
        }
        state.withLock { state in
            var members = state.channels[channel] ?? [:]
            if let old = members.removeValue(forKey: uid) {
                old.membership.deliver(.removed(code: Self.replacedCode, message: "joined again elsewhere"))
                old.membership.deactivate()
                for other in members.values { other.membership.deliver(.memberLeft(uid: uid, reason: 1)) }
            }
            let inJoinOrder = members.sorted { $0.value.joinNumber < $1.value.joinNumber }.map(\.key)
            membership.deliver(.joined(members: inJoinOrder, iceServers: []))
            for other in members.values { other.membership.deliver(.memberJoined(uid: uid)) }
            state.joins += 1
            members[uid] = Member(membership: membership, joinNumber: state.joins)
            state.channels[channel] = members
        }
        return membership
    }

    fileprivate func send(_ signal: WebRTCSignal, from membership: Membership, to uid: UInt) {
        state.withLock { state in
            guard let members = state.channels[membership.channel],
                members[membership.uid]?.membership === membership, let target = members[uid]
            else { return }
            target.membership.deliver(.signal(from: membership.uid, signal))
        }
    }

    fileprivate func leave(_ membership: Membership) {
        state.withLock { state in
            guard state.channels[membership.channel]?[membership.uid]?.membership === membership else { return }
            state.channels[membership.channel]?[membership.uid] = nil
            if state.channels[membership.channel]?.isEmpty == true { state.channels[membership.channel] = nil }
            for other in (state.channels[membership.channel] ?? [:]).values {
                other.membership.deliver(.memberLeft(uid: membership.uid, reason: 0))
            }
        }
        membership.deactivate()
    }
}

/// One membership of an ``InProcessChannelHub``: delivers its events in order on its own serial queue.
private final class Membership: WebRTCChannelMembership {
    let channel: String
    let uid: UInt
    private weak let hub: InProcessChannelHub?
    private let events: @Sendable (WebRTCChannelEvent) -> Void
    private let queue: DispatchQueue
    private let active = Locked(true)

    init(hub: InProcessChannelHub, channel: String, uid: UInt, events: @escaping @Sendable (WebRTCChannelEvent) -> Void)
    {
        self.hub = hub
        self.channel = channel
        self.uid = uid
        self.events = events
        queue = DispatchQueue(label: "callapi.webrtc.hub.\(channel).\(uid)")
    }

    /// Queues `event` for delivery; it is dropped if the membership is deactivated before it runs.
    func deliver(_ event: WebRTCChannelEvent) {
        queue.async { [self] in
            guard active.withLock({ $0 }) else { return }
            events(event)
        }
    }

    /// Delivers what is already queued, then nothing more.
    func deactivate() {
        queue.async { [self] in active.withLock { $0 = false } }
    }

    func send(_ signal: WebRTCSignal, to uid: UInt) {
        hub?.send(signal, from: self, to: uid)
    }

    func renewToken(_ token: String) {}

    func leave() {
        hub?.leave(self)
        active.withLock { $0 = false }
    }
}
