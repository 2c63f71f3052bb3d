/// Who sent a message that arrived from another node, as this node's call ledger knows them: one stand-in session
/// per user and node, since the mailbox carries the sender's user, not their session (docs/scale-out.md, "The
/// ledger across nodes").
extension SessionID {
    /// The stand-in for `user`'s sessions on `node`: the top bit set, which this node's own session numbers (counted
    /// up from 1) never reach, and a 63-bit FNV-1a hash of the two below it, the same on every node.
    package static func remote(node: String, user: String) -> SessionID {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in node.utf8 + [0] + user.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        return SessionID(1 << 63 | hash >> 1)
    }

    /// Whether this is a stand-in for sessions on another node (``remote(node:user:)``).
    package var isRemote: Bool { number >> 63 == 1 }
}

extension ClusterEnvelope {
    /// The node that wrote it: the one named in its message id (`m-<node>-<n>`; node ids have no `-`).
    package var senderNode: String? {
        let id = messageId.utf8
        guard id.starts(with: "m-".utf8) else { return nil }
        let rest = id.dropFirst(2)
        guard let dash = rest.firstIndex(of: UInt8(ascii: "-")), dash != rest.startIndex else { return nil }
        return String(messageId[rest.startIndex..<dash])
    }
}
