/// What an endpoint has learnt about its peers' clients: whether each one acknowledges messages.
/// Bounded: the oldest entries are forgotten first.
///
/// A list in the order the peers were first heard, searched from the newest: an endpoint hears from a few peers
/// at a time, so the one asked about is found in a comparison or two, where a dictionary hashed its id on every
/// message received and every message sent.
struct PeerCapabilities: Sendable, Equatable {
    private var entries: [(peer: UInt, acknowledges: Bool)] = []
    let capacity = 256

    /// true: acknowledges; false: wire format 1.0 only; nil: not known yet.
    subscript(peer: UInt) -> Bool? {
        index(of: peer).map { entries[$0].acknowledges }
    }

    mutating func learn(_ peer: UInt, acknowledges: Bool) {
        if let index = index(of: peer) {
            entries[index].acknowledges = acknowledges
            return
        }
        entries.append((peer, acknowledges))
        if entries.count > capacity { entries.removeFirst() }
    }

    private func index(of peer: UInt) -> Int? {
        entries.lastIndex { $0.peer == peer }
    }

    static func == (lhs: PeerCapabilities, rhs: PeerCapabilities) -> Bool {
        lhs.entries.elementsEqual(rhs.entries) { $0.peer == $1.peer && $0.acknowledges == $1.acknowledges }
    }
}
