import CallAPISignalProtocol
import NIOCore

/// Takes the server's WebSocket frames (RFC 6455 §5.2) off the front of the bytes a client socket has read.
///
/// NIO's `WebSocketFrameDecoder`, behind its `ByteToMessageHandler`, cost the bench's clients ~9,500 of the
/// ~97,000 instructions they spent per relayed message (callgrind, docs/benchmarks.md): a frame value and a
/// handler hop per frame, and a buffer kept across reads. Here a frame's payload is a slice of the bytes read, and
/// only a frame split across reads is kept. The header is checked as the server checks its clients' frames
/// (``WebSocketFrameHeader``), except that a server's frames must not be masked.
struct ServerFrameReader {
    /// The largest payload a data frame may carry.
    let maxPayload: Int

    struct Frame {
        var fin: Bool
        /// One of ``FrameOpcode``'s: the header reader refuses the others.
        var opcode: UInt8
        /// The payload, a slice of the bytes read.
        var payload: ByteBuffer
    }

    enum Failure: Error, Equatable {
        /// The frame's header breaks the protocol or the limit.
        case refused(WebSocketFrameHeader.Refusal)
        /// A fragmented message grew over the limit (found by the reader's user, which follows messages; so are
        /// the two below).
        case messageTooLarge(Int)
        /// A data frame began a message before the last fragmented one ended (§5.4).
        case messageInterrupted
        /// A continuation frame came with no fragmented message in progress.
        case continuationWithoutMessage

        /// The close code: 1009 for a message over the limit, 1002 (protocol error) for the rest.
        var closeCode: UInt16 {
            switch self {
            case .refused(let refusal): refusal.closeCode
            case .messageTooLarge: 1009
            case .messageInterrupted, .continuationWithoutMessage: 1002
            }
        }
    }

    /// Takes the next whole frame off the front of `bytes`; nil, with `bytes` untouched, when the frame's bytes
    /// have not all arrived yet. A frame the RFC refuses throws as soon as its header shows it.
    func next(from bytes: inout ByteBuffer) throws(Failure) -> Frame? {
        let reading = bytes.withUnsafeReadableBytes { readable in
            WebSocketFrameHeader.read(
                UnsafeRawBufferPointer(rebasing: readable.prefix(WebSocketFrameHeader.maxSize)), masked: false,
                maxPayloadBytes: maxPayload)
        }
        switch reading {
        case .incomplete:
            return nil
        case .refused(let refusal):
            throw .refused(refusal)
        case .header(let header):
            guard let payload = bytes.getSlice(at: bytes.readerIndex + header.size, length: header.payloadLength)
            else { return nil }
            bytes.moveReaderIndex(forwardBy: header.size + header.payloadLength)
            return Frame(fin: header.fin, opcode: header.opcode, payload: payload)
        }
    }
}
