/// The event info of a state change, as the machine hands it over: what it is made from, not the dictionary.
///
/// Most state changes report a message's fields (the one sent, or the one received) with the publisher (and,
/// for a received one, the sender) set on top. Building that dictionary hashed every key of the message on
/// every call step, whether or not anyone listened; ``dictionary`` builds it when it is read: by the shell,
/// for listeners and state streams, and by tests.
package struct EventInfo: Sendable {
    /// What the dictionary starts from.
    private enum Base: Sendable {
        case fields([String: JSONValue])
        case message(MessageFields)
    }

    /// A message's fields, kept by reference: the object read from a received text is large, and an action
    /// carrying it is copied into the shell's buffer.
    private final class MessageFields: Sendable {
        enum Source: Sendable {
            case sent(CallMessage)
            case received(CallMessageObject)
        }

        let source: Source

        init(_ source: Source) { self.source = source }

        var fields: [String: JSONValue] {
            switch source {
            case .sent(let message): message.fields
            case .received(let object): object.fields
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
        base = .message(MessageFields(.sent(message)))
    }

    /// The fields of a received message, under their keys as received (unknown ones included).
    init(received object: CallMessageObject) {
        base = .message(MessageFields(.received(object)))
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

    /// The info as the dictionary ``CallStateChange/eventInfo`` holds.
    package var dictionary: [String: JSONValue] {
        var result: [String: JSONValue]
        switch base {
        case .fields(let fields): result = fields
        case .message(let message): result = message.fields
        }
        if let fromUserId { result[kFromUserId] = .int(Int(fromUserId)) }
        if let publisher { result[kPublisher] = .int(Int(publisher)) }
        return result
    }
}
