import Testing

@testable import CallAPIWire

/// The action numbers of wire format 1.0 (docs/spec/wire-format.md), each read back as its action.
@Suite struct MessageActionTests {
    @Test func everyActionIsReadBackFromItsNumber() {
        for action in MessageAction.allCases {
            #expect(MessageAction(rawValue: action.rawValue) == action)
        }
    }

    @Test func theNumbersAreThoseOfTheWireFormat() {
        let numbers = Dictionary(uniqueKeysWithValues: MessageAction.allCases.map { ($0, $0.rawValue) })
        #expect(
            numbers == [
                .videoCall: 0, .cancelCall: 1, .accept: 2, .reject: 3, .hangup: 4, .audioCall: 10, .ack: 20,
                .keepAlive: 21,
            ])
    }

    @Test func numbersNoActionHasAreNotActions() {
        for number in [-1, 5, 9, 11, 19, 22, 100] {
            #expect(MessageAction(rawValue: number) == nil)
        }
    }

    @Test func everyKeyIsReadBackFromItsSpelling() {
        for key in CallMessageKey.allCases {
            #expect(CallMessageKey(name: key.name) == key)
            #expect(key.name == key.spelling.description)
        }
        #expect(CallMessageKey.messageAction.name == "message_action")
        #expect(CallMessageExtensionKey.callerName.description == "displayName")
    }
}
