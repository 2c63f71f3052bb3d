/// What an endpoint has learnt about its peers' clients: whether each one acknowledges messages.
/// Bounded: the oldest entries are forgotten first.
struct PeerCapabilities: Sendable, Equatable {
    private var known: [UInt: Bool] = [:]
    private var order: [UInt] = []
    let capacity = 256

    /// true: acknowledges; false: wire format 1.0 only; nil: not known yet.
    subscript(peer: UInt) -> Bool? { known[peer] }

    mutating func learn(_ peer: UInt, acknowledges: Bool) {
        if known.updateValue(acknowledges, forKey: peer) == nil {
            order.append(peer)
            if order.count > capacity { known[order.removeFirst()] = nil }
        }
    }
}
