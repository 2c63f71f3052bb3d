import Foundation

/// The system call screen's identifier of a call: a name-based UUID (version 5, RFC 9562) of its `callId`.
///
/// Derived, not stored, so that a VoIP push and the signaling message of the same call name the same system
/// call even when the app was killed in between, and every device of a user names it alike.
public enum CallUUID {
    /// The namespace of CallAPI call ids (itself a random UUID, fixed forever).
    public static let namespace = UUID(uuidString: "5C9A1F3E-7B2D-4E61-9A0C-3D8F2B6E4A17")!

    /// The UUID of the call `callId`.
    public static func of(callId: String) -> UUID {
        nameBased(namespace: namespace, name: callId)
    }

    /// A version 5 UUID of `name` in `namespace`.
    public static func nameBased(namespace: UUID, name: String) -> UUID {
        let ns = namespace.uuid
        let namespaceBytes: [UInt8] = [
            ns.0, ns.1, ns.2, ns.3, ns.4, ns.5, ns.6, ns.7, ns.8, ns.9, ns.10, ns.11, ns.12, ns.13, ns.14, ns.15,
        ]
        var hash = SHA1.digest(namespaceBytes + Array(name.utf8))
        hash[6] = (hash[6] & 0x0F) | 0x50  // version 5
        hash[8] = (hash[8] & 0x3F) | 0x80  // RFC variant
        return UUID(
            uuid: (
                hash[0], hash[1], hash[2], hash[3], hash[4], hash[5], hash[6], hash[7], hash[8], hash[9], hash[10],
                hash[11], hash[12], hash[13], hash[14], hash[15]
            ))
    }
}
