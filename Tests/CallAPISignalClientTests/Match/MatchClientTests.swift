import CallAPI
import CallAPISignalProtocol
import Testing

@testable import CallAPISignalClient

/// The client's side of the match queue and server-placed calls: the frames, the connection machine's requests,
/// and which incoming calls auto-accept takes (docs/match.md).
@Suite struct MatchClientTests {
    var machine = ConnectionMachine(
        settings: .init(
            pingIntervalMillis: 15_000, livenessTimeoutMillis: 40_000, backoffBaseMillis: 200, backoffMaxMillis: 3_000,
            connectTimeoutMillis: 5_000, sendQueueLimit: 2, sendQueueTimeoutMillis: 10_000, requestTimeoutMillis: 8_000)
    )

    mutating func connect() {
        _ = machine.handle(.login(token: "t"), now: 0)
        _ = machine.handle(.socketOpened(socket: 1), now: 0)
        _ = machine.handle(.frame(socket: 1, ConnectionMachineTests.welcome), now: 0)
    }

    @Test func matchFramesRoundTripAndKeepTheirWireNames() throws {
        let client: [ClientFrame] = [.matchEnter(.init(id: 1, tags: ["paris", "chess"])), .matchLeave(.init(id: 2))]
        for frame in client {
            #expect(try FrameCoding.decodeClientFrame(FrameCoding.encode(frame)).get() == frame)
        }
        let server: [ServerFrame] = [
            .placeCall(.init(callId: "c", callee: "1002", video: false, matchId: "m", tag: "paris")),
            .matched(.init(matchId: "m", peer: "1001", tag: "paris", callId: "c", role: .callee)),
            .matchQueue(.init(id: 3, waiting: true, tags: ["paris"])),
        ]
        for frame in server {
            #expect(try FrameCoding.decodeServerFrame(FrameCoding.encode(frame)).get() == frame)
        }
        #expect(
            FrameCoding.encode(.placeCall(.init(callId: "c", callee: "1002", video: true)))
                == "{\"callId\":\"c\",\"callee\":\"1002\",\"placedBy\":\"server\",\"type\":\"place_call\",\"video\":true}"
        )
        #expect(FrameCoding.encode(.matchLeave(.init(id: 4))) == "{\"id\":4,\"type\":\"match_leave\"}")
    }

    @Test mutating func enteringAndLeavingTheQueueAreRequestsAnsweredByMatchQueue() {
        #expect(
            machine.handle(.match(ticket: 1, .enter(tags: ["a"])), now: 0)
                == [.completeMatch(ticket: 1, .failure(.notLoggedIn))])
        connect()
        #expect(
            machine.handle(.match(ticket: 2, .enter(tags: ["a"])), now: 1)
                == [.write(1, .matchEnter(.init(id: 1, tags: ["a"])))])
        #expect(
            machine.handle(.frame(socket: 1, .matchQueue(.init(id: 1, waiting: true, tags: ["a"]))), now: 2)
                == [.completeMatch(ticket: 2, .success(["a"]))])
        #expect(machine.handle(.match(ticket: 3, .leave), now: 3) == [.write(1, .matchLeave(.init(id: 2)))])
        #expect(
            machine.handle(.frame(socket: 1, .error(.init(id: 2, code: .matchQueueFull, message: "full"))), now: 4)
                == [.completeMatch(ticket: 3, .failure(.refused(.matchQueueFull, "full")))])
    }

    @Test mutating func theServersPlaceCallAndMatchedFramesAreReported() {
        connect()
        let order = ServerFrame.PlaceCall(callId: "c", callee: "1002", video: true)
        #expect(machine.handle(.frame(socket: 1, .placeCall(order)), now: 1) == [.callPlaced(order)])
        let match = ServerFrame.Matched(matchId: "m", peer: "1002", tag: "t", callId: "c", role: .caller)
        #expect(machine.handle(.frame(socket: 1, .matched(match)), now: 2) == [.matched(match)])
    }

    static func ringing(_ callId: String, from caller: Int) -> CallStateChange {
        CallStateChange(
            state: .calling, reason: .remoteVideoCall, eventReason: "",
            eventInfo: [kCallId: .string(callId), kFromUserId: .int(caller)])
    }

    static let match = MatchFound(matchId: "m", peerId: "1001", tag: "t", callId: "c-1", role: .callee)

    @Test func autoAcceptTakesTheMatchedCallWhicheverArrivesFirst() {
        var book = MatchedCallBook()
        #expect(book.matched(Self.match) == nil)
        #expect(book.stateChanged(Self.ringing("c-1", from: 1001)) == "1001")

        var late = MatchedCallBook()
        #expect(late.stateChanged(Self.ringing("c-1", from: 1001)) == nil)
        #expect(late.matched(Self.match) == "1001")
    }

    @Test func autoAcceptRefusesACallWithTheMatchsIdFromAnotherUser() {
        var book = MatchedCallBook()
        _ = book.matched(Self.match)
        // Someone who learnt the call id calls first: its sender, vouched by the server, is not the peer.
        #expect(book.stateChanged(Self.ringing("c-1", from: 1666)) == nil)
        #expect(book.stateChanged(Self.ringing("c-2", from: 1001)) == nil)
        #expect(book.stateChanged(Self.ringing("c-1", from: 1001)) == "1001")
        // Accepted once: a repeat of the same call is not accepted again.
        #expect(book.stateChanged(Self.ringing("c-1", from: 1001)) == nil)
    }

    @Test func autoAcceptIgnoresMatchesWhereThisUserCallsAndForgetsOldOnes() {
        var book = MatchedCallBook()
        var caller = Self.match
        caller.role = .caller
        #expect(book.matched(caller) == nil)
        #expect(book.stateChanged(Self.ringing("c-1", from: 1001)) == nil)
        for number in 0...MatchedCallBook.maxExpected {
            _ = book.matched(MatchFound(matchId: "m", peerId: "1001", tag: "t", callId: "old-\(number)", role: .callee))
        }
        #expect(book.expected.count == MatchedCallBook.maxExpected)
        #expect(book.stateChanged(Self.ringing("old-0", from: 1001)) == nil)
    }
}
