/// The event info of a state change, as the machine hands it over: what it is made from, not the dictionary.
///
/// Most state changes report a message's fields (the one sent, or the one received) with the publisher (and,
/// for a received one, the sender) set on top; the connected state reports the call and its cost map.
/// Building those dictionaries hashed every key on every call step, whether or not anyone listened;
/// ``dictionary`` builds one when it is read: by the shell, for listeners and state streams, and by tests.
package struct EventInfo: Sendable, Equatable {
    /// What the dictionary starts from.
    private enum Base: Sendable {
        case fields([String: JSONValue])
        case source(FieldsSource)
    }

    /// What the fields are made from, kept by reference: the object read from a received text is large, and an
    /// action carrying it is copied into the shell's buffer.
    private final class FieldsSource: Sendable {
        enum Kind: Sendable {
            case sent(CallMessage)
            case received(CallMessageObject)
            /// The call `callId` in `room` between this endpoint's `user` and `peer` connected.
            case connected(room: String, peer: UInt, user: UInt, callId: String, costs: CostMap)
        }

        let kind: Kind

        init(_ kind: Kind) { self.kind = kind }

        var fields: [String: JSONValue] {
            switch kind {
            case .sent(let message): message.fields
            case .received(let object): object.fields
            case .connected(let room, let peer, let user, let callId, let costs):
                [
                    kFromRoomId: .string(room), kFromUserId: .int(Int(peer)), kRemoteUserId: .int(Int(user)),
                    kCallId: .string(callId), kCostTimeMap: costs.json,
                ]
            }
        }
    }

    private let base: Base
    /// Set on top of the base, in this order.
    private var fromUserId: UInt?
    private var publisher: UInt?

    /// Info of exactly these entries.
    package init(_ fields: [String: JSONValue] = [:]) {
        base = .fields(fields)
    }

    /// The fields of a message this endpoint sends.
    init(sent message: CallMessage) {
        base = .source(FieldsSource(.sent(message)))
    }

    /// The connected state's: `call` (now connected) as this endpoint's `user` sees it.
    init(connected call: Call, user: UInt) {
        base = .source(
            FieldsSource(.connected(room: call.room, peer: call.peer, user: user, callId: call.id, costs: call.costs)))
    }

    /// The fields of a received message, under their keys as received (unknown ones included).
    init(received object: consuming CallMessageObject) {
        base = .source(FieldsSource(.received(object)))
    }

    /// This info with `kPublisher` set to `user`.
    func publishedBy(_ user: UInt) -> EventInfo {
        var info = self
        info.publisher = user
        return info
    }

    /// This info with `kFromUserId` and `kPublisher` set to `sender`, the user the channel says sent it.
    func sentBy(_ sender: UInt) -> EventInfo {
        var info = self
        info.fromUserId = sender
        info.publisher = sender
        return info
    }

    /// Equal when the dictionaries are.
    package static func == (lhs: EventInfo, rhs: EventInfo) -> Bool { lhs.dictionary == rhs.dictionary }

    /// The info as the dictionary ``CallStateChange/eventInfo`` holds.
    package var dictionary: [String: JSONValue] {
        var result: [String: JSONValue]
        switch base {
        case .fields(let fields): result = fields
        case .source(let source): result = source.fields
        }
        if let fromUserId { result[kFromUserId] = .int(Int(fromUserId)) }
        if let publisher { result[kPublisher] = .int(Int(publisher)) }
        return result
    }
}
