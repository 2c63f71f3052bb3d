import Testing

@testable import CallAPI

/// What an endpoint learns of its peers' clients (a list searched from the newest): it answers as a dictionary
/// bounded to the peers first heard most recently would.
@Suite("Peer capabilities")
struct PeerCapabilitiesTests {
    @Test("a peer is unknown until heard, then known as last heard")
    func learnsAndRelearns() {
        var peers = PeerCapabilities()
        #expect(peers[7] == nil)
        peers.learn(7, acknowledges: false)
        #expect(peers[7] == false)
        peers.learn(7, acknowledges: true)
        #expect(peers[7] == true)
        #expect(peers[8] == nil)
    }

    @Test("past its capacity it forgets the peers first heard longest ago, hearing one again keeps its place")
    func forgetsTheOldestFirst() {
        var peers = PeerCapabilities()
        var model: [UInt: Bool] = [:]
        var order: [UInt] = []
        // A fixed pseudo-random walk over 400 peers: repeats, updates and evictions all occur.
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0..<3_000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let peer = UInt(state >> 33) % 400
            let acknowledges = state & 0x100 != 0
            peers.learn(peer, acknowledges: acknowledges)
            if model.updateValue(acknowledges, forKey: peer) == nil {
                order.append(peer)
                if order.count > peers.capacity { model[order.removeFirst()] = nil }
            }
        }
        for peer in UInt(0)..<400 {
            #expect(peers[peer] == model[peer], "peer \(peer)")
        }
    }
}
