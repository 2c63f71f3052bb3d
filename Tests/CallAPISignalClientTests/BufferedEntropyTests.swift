import NIOWebSocket
import Testing

@testable import CallAPISignalClient

/// The masking keys' source: drawn in batches, never repeating a batch.
@Suite struct BufferedEntropyTests {
    @Test func wordsAcrossSeveralDrawsAreAllDifferent() {
        var entropy = BufferedEntropy()
        // Ten draws' worth: a source that did not draw again after its first 32 words would repeat them (or hand
        // out zeros), and 320 random 64-bit words collide with a chance of about 3 in 10^15.
        let words = (0..<320).map { _ in entropy.next() }
        #expect(Set(words).count == words.count)
    }

    @Test func twoSourcesDoNotShareTheirWords() {
        var first = BufferedEntropy()
        var second = BufferedEntropy()
        let a = (0..<40).map { _ in first.next() }
        let b = (0..<40).map { _ in second.next() }
        #expect(Set(a).isDisjoint(with: b))
    }

    @Test func masksKeysThroughNIOsGenerator() {
        var entropy = BufferedEntropy()
        let keys = (0..<100).map { _ in WebSocketMaskingKey.random(using: &entropy) }
        // 100 random 32-bit keys collide with a chance of about 1 in a million.
        #expect(Set(keys.map { Array($0) }).count == keys.count)
    }
}
