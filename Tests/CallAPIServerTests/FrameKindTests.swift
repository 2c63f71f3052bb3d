import CallAPISignalProtocol
import Foundation
import Testing

/// Each frame's `type` string is declared once, in its `Kind`; the decoders, the encoders and the protocol
/// document all follow it.
@Suite struct FrameKindTests {
    /// A bare `{"type":…}` of a known kind decodes, or is refused for its missing fields, but never as unknown.
    private func expectKnown<Frame>(
        _ raw: String, decode: (String) -> Result<Frame, FrameDecodingError>, kind: (Frame) -> String
    ) {
        switch decode("{\"type\":\"\(raw)\",\"id\":7}") {
        case .success(let frame): #expect(kind(frame) == raw)
        case .failure(let error):
            #expect(error.code != .unknownType, "\(raw): \(error.message)")
            #expect(error.type == raw)
        }
    }

    @Test func everySignalFrameKindIsKnownToItsDecoder() {
        for kind in ClientFrame.Kind.allCases {
            expectKnown(kind.rawValue, decode: FrameCoding.decodeClientFrame, kind: \.type)
        }
        for kind in ServerFrame.Kind.allCases {
            expectKnown(kind.rawValue, decode: FrameCoding.decodeServerFrame, kind: \.type)
        }
    }

    @Test func everyChannelFrameKindIsKnownToItsDecoder() {
        for kind in ChannelClientFrame.Kind.allCases {
            expectKnown(kind.rawValue, decode: ChannelFrameCoding.decodeClientFrame, kind: \.type)
        }
        for kind in ChannelServerFrame.Kind.allCases {
            expectKnown(kind.rawValue, decode: ChannelFrameCoding.decodeServerFrame, kind: \.type)
        }
    }

    @Test func aFramesTypeIsItsKindsRawValue() {
        #expect(ClientFrame.send(.init(id: 1, to: "u", body: "b")).kind == .send)
        #expect(ClientFrame.matchLeave(.init()).type == "match_leave")
        #expect(ServerFrame.heldResult(.init(messageId: "m", to: "u", result: .expired)).type == "held_result")
        #expect(ChannelClientFrame.renew(.init(token: "t")).type == "renew")
    }

    @Test func theProtocolDocumentNamesEveryFrameType() throws {
        let document = try String(
            contentsOf: CLIProcess.packageRoot.appendingPathComponent("docs/protocol.md"), encoding: .utf8)
        let types =
            ClientFrame.Kind.allCases.map(\.rawValue) + ServerFrame.Kind.allCases.map(\.rawValue)
            + ChannelClientFrame.Kind.allCases.map(\.rawValue) + ChannelServerFrame.Kind.allCases.map(\.rawValue)
        for type in types {
            #expect(document.contains("`\(type)`"), "docs/protocol.md does not name `\(type)`")
        }
    }

    @Test func theProtocolDocumentExplainsEveryErrorCode() throws {
        let document = try String(
            contentsOf: CLIProcess.packageRoot.appendingPathComponent("docs/protocol.md"), encoding: .utf8)
        for code in SignalErrorCode.allCases where code != .unknown {
            #expect(document.contains("| `\(code.rawValue)` |"), "docs/protocol.md has no row for `\(code.rawValue)`")
        }
    }
}
