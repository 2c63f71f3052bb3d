import CallAPI
import CallAPISignalProtocol
import Dispatch
import Foundation

/// A ``WebRTCChannelTransport`` inside one process: channels are names, members are uids on devices, and signals
/// are handed from one engine to another. For tests and for demos that run both users in one process.
///
/// Each membership gets its events on a serial queue of its own, in the order the hub saw them. A uid joining a
/// channel from a device it is already in replaces its old membership (the old one is removed with code
/// ``replacedCode``, the others see it leave with reason 1 and join again); from another device, it is one more
/// member. A signal without a device reaches the uid's only member, and is dropped when it has several, as our
/// server refuses it.
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
        var channels: [String: [ChannelMember: Member]] = [:]
        var joins = 0
    }

    private let state = Locked(State())
    private let authorize: Authorizer

    /// A hub that lets everyone in unless `authorize` refuses.
    public init(authorize: @escaping Authorizer = { _, _, _ in nil }) {
        self.authorize = authorize
    }

    /// The uids in `channel`, sorted, each once however many devices it is on.
    public func members(of channel: String) -> [UInt] {
        state.withLock { Set(($0.channels[channel] ?? [:]).keys.map(\.uid)).sorted() }
    }

    /// Removes `uid` (every device of it) from `channel` as a server would when kicking it: each of its
    /// memberships gets ``WebRTCChannelEvent/removed(code:message:)``, the others see each leave with reason
    /// `leftReason`.
    public func remove(uid: UInt, from channel: String, code: Int, message: String, leftReason: Int = 0) {
        state.withLock { state in
            for key in (state.channels[channel] ?? [:]).keys where key.uid == uid {
                guard let member = state.channels[channel]?.removeValue(forKey: key) else { continue }
                member.membership.deliver(.removed(code: code, message: message))
                member.membership.deactivate()
                for other in (state.channels[channel] ?? [:]).values {
                    other.membership.deliver(.memberLeft(key, reason: leftReason))
                }
            }
            if state.channels[channel]?.isEmpty == true { state.channels[channel] = nil }
        }
    }

    /// `uid` on `device` vanishes from `channel` without a word, as when its process dies: the others see it
    /// leave with reason 1; its own membership hears nothing more.
    public func drop(uid: UInt, device: String? = nil, from channel: String) {
        let key = ChannelMember(uid: uid, device: device)
        state.withLock { state in
            guard let member = state.channels[channel]?.removeValue(forKey: key) else { return }
            if state.channels[channel]?.isEmpty == true { state.channels[channel] = nil }
            member.membership.deactivate()
            for other in (state.channels[channel] ?? [:]).values {
                other.membership.deliver(.memberLeft(key, reason: 1))
            }
        }
    }

    // MARK: - WebRTCChannelTransport

    public func join(
        channel: String, token: String, uid: UInt, device: String?,
        events: @escaping @Sendable (WebRTCChannelEvent) -> Void
    ) -> any WebRTCChannelMembership {
        let key = ChannelMember(uid: uid, device: device)
        let membership = Membership(hub: self, channel: channel, member: key, events: events)
        if let refusal = authorize(channel, uid, token) {
            membership.deliver(.joinFailed(code: refusal.code, message: refusal.message))
            membership.deactivate()
            return membership
        }
        state.withLock { state in
            var members = state.channels[channel] ?? [:]
            if let old = members.removeValue(forKey: key) {
                old.membership.deliver(.removed(code: Self.replacedCode, message: "joined again elsewhere"))
                old.membership.deactivate()
                for other in members.values { other.membership.deliver(.memberLeft(key, reason: 1)) }
            }
            let inJoinOrder = members.sorted { $0.value.joinNumber < $1.value.joinNumber }.map(\.key)
            membership.deliver(.joined(members: inJoinOrder, iceServers: []))
            for other in members.values { other.membership.deliver(.memberJoined(key)) }
            state.joins += 1
            members[key] = Member(membership: membership, joinNumber: state.joins)
            state.channels[channel] = members
        }
        return membership
    }

    fileprivate func send(_ signal: WebRTCSignal, from membership: Membership, to target: ChannelMember) {
        state.withLock { state in
            guard let members = state.channels[membership.channel],
                members[membership.member]?.membership === membership
            else { return }
            let receiver: Member?
            if target.device != nil {
                receiver = members[target]
            } else {
                let ofUid = members.filter { $0.key.uid == target.uid }
                receiver = ofUid.count == 1 ? ofUid.first?.value : nil
            }
            receiver?.membership.deliver(.signal(from: membership.member, signal))
        }
    }

    fileprivate func leave(_ membership: Membership) {
        state.withLock { state in
            guard state.channels[membership.channel]?[membership.member]?.membership === membership else { return }
            state.channels[membership.channel]?[membership.member] = nil
            if state.channels[membership.channel]?.isEmpty == true { state.channels[membership.channel] = nil }
            for other in (state.channels[membership.channel] ?? [:]).values {
                other.membership.deliver(.memberLeft(membership.member, reason: 0))
            }
        }
        membership.deactivate()
    }
}

/// One membership of an ``InProcessChannelHub``: delivers its events in order on its own serial queue.
private final class Membership: WebRTCChannelMembership {
    let channel: String
    let member: ChannelMember
    private weak let hub: InProcessChannelHub?
    private let events: @Sendable (WebRTCChannelEvent) -> Void
    private let queue: DispatchQueue
    private let active = Locked(true)

    init(
        hub: InProcessChannelHub, channel: String, member: ChannelMember,
        events: @escaping @Sendable (WebRTCChannelEvent) -> Void
    ) {
        self.hub = hub
        self.channel = channel
        self.member = member
        self.events = events
        queue = DispatchQueue(label: "callapi.webrtc.hub.\(channel).\(member)")
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

    func send(_ signal: WebRTCSignal, to member: ChannelMember) {
        hub?.send(signal, from: self, to: member)
    }

    func renewToken(_ token: String) {}

    func leave() {
        hub?.leave(self)
        active.withLock { $0 = false }
    }
}
