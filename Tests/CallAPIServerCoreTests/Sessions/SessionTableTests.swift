import CallAPITesting
import Testing

@_spi(ServerShell) @testable import CallAPIServerCore

/// The hubs' session tables hold what a `Dictionary` would, whatever the ids and the order of changes.
@Suite struct SessionTableTests {
    /// Ids as the server hands them out, ids whose low bits are all equal, and ids anywhere in 64 bits.
    enum Ids: CaseIterable {
        case sequential, sameLowBits, anywhere

        func make(_ count: Int, _ random: inout SeededRandom) -> [SessionID] {
            switch self {
            case .sequential: (1...count).map { SessionID(UInt64($0)) }
            case .sameLowBits: (1...count).map { SessionID(UInt64($0) << 40 | 0x5) }
            case .anywhere: (1...count).map { _ in SessionID(random.next()) }
            }
        }
    }

    @Test(arguments: Ids.allCases)
    func randomChangesLeaveWhatADictionaryWouldHold(ids kind: Ids) {
        var random = SeededRandom(seed: 0x5E55)
        let ids = kind.make(300, &random)
        var table = SessionTable<Int>()
        var model: [SessionID: Int] = [:]
        for step in 0..<4_000 {
            let id = ids[Int(random.next() % UInt64(ids.count))]
            switch random.next() % 7 {
            case 0, 1:
                #expect(table.updateValue(step, forKey: id) == model.updateValue(step, forKey: id))
            case 2:
                table[id] = step
                model[id] = step
            case 3:
                #expect(table.removeValue(forKey: id) == model.removeValue(forKey: id))
            case 4:
                table[id] = nil
                model[id] = nil
            case 5:
                // Changed in place through the optional, and through the index.
                table[id]? += 1
                model[id]? += 1
                if let index = table.index(forKey: id) {
                    table[at: index] *= 3
                    model[id]! *= 3
                }
            default:
                #expect(table[id] == model[id])
            }
            #expect(table.count == model.count)
        }
        for id in ids {
            #expect(table[id] == model[id])
            #expect(table.index(forKey: id).map { table.id(at: $0) } == model[id].map { _ in id })
        }
        #expect(Dictionary(uniqueKeysWithValues: table.elements.map { ($0.id, $0.value) }) == model)
        #expect(table.values.sorted() == model.values.sorted())
    }

    @Test func emptiedAndFilledAgainItHoldsEveryId() {
        var table = SessionTable<UInt64>()
        for round in 0..<3 {
            for number in 1...1_000 as ClosedRange<UInt64> { table[SessionID(number)] = number &* 7 }
            #expect(table.count == 1_000)
            for number in stride(from: 1_000, through: 1, by: -1) as StrideThrough<UInt64> {
                #expect(table.removeValue(forKey: SessionID(number)) == number &* 7, "round \(round)")
            }
            #expect(table.isEmpty)
            #expect(table.index(forKey: SessionID(1)) == nil)
        }
    }
}
