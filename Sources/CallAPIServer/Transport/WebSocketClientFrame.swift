import CallAPIServerCore
import CallAPISignalProtocol
import NIOCore

/// One frame from a WebSocket client (RFC 6455 §5.2), read from the front of a connection's bytes: its header
/// checked, its payload still masked until it is copied where it is used (``unmask(into:)``).
///
/// The server reads client frames itself instead of through NIO's decoder: NIO's decoder did not check the mask
/// bit (a separate scan of every byte did), copied each payload into a buffer of its own to unmask it, and cost two
/// more handlers per connection; see docs/benchmarks.md, "Frames read in place".
struct WebSocketClientFrame {
    var fin: Bool
    var opcode: UInt8
    /// The masking key's four bytes, in the order they came (RFC 6455 §5.3).
    var maskKey: UInt32
    /// The masked payload: a slice of the bytes read.
    var payload: ByteBuffer

    /// What the front of a connection's bytes holds.
    enum Reading {
        case frame(WebSocketClientFrame)
        /// The bytes end inside a frame: read again with more of them.
        case incomplete
        /// The frame breaks the protocol or the size limit: the connection closes with the refusal's code.
        case refused(Refusal)
    }

    /// Why a client frame closes its connection (checked by the header reader both ends share).
    typealias Refusal = WebSocketFrameHeader.Refusal

    /// Reads the frame at the front of `bytes`, moving past it; on `.incomplete` or `.refused`, `bytes` is
    /// unchanged.
    static func read(from bytes: inout ByteBuffer, maxPayloadBytes: Int) -> Reading {
        let reading = bytes.withUnsafeReadableBytes { readable in
            WebSocketFrameHeader.read(
                UnsafeRawBufferPointer(rebasing: readable.prefix(WebSocketFrameHeader.maxSize)), masked: true,
                maxPayloadBytes: maxPayloadBytes)
        }
        switch reading {
        case .incomplete:
            return .incomplete
        case .refused(let refusal):
            return .refused(refusal)
        case .header(let header):
            // Read with `masked: true`, every header has a key.
            guard let maskKey = header.maskKey else { return .refused(.unmasked) }
            guard let payload = bytes.getSlice(at: bytes.readerIndex + header.size, length: header.payloadLength)
            else { return .incomplete }
            bytes.moveReaderIndex(forwardBy: header.size + header.payloadLength)
            return .frame(
                WebSocketClientFrame(fin: header.fin, opcode: header.opcode, maskKey: maskKey, payload: payload))
        }
    }

    /// Writes the unmasked payload to the start of `destination` (at least ``payload``'s readable bytes long).
    func unmask(into destination: UnsafeMutableRawBufferPointer) {
        payload.withUnsafeReadableBytes { WebSocketMasking.apply($0, key: maskKey, into: destination) }
    }

    /// Appends the unmasked payload to `buffer`.
    func appendUnmasked(to buffer: inout ByteBuffer) {
        let count = payload.readableBytes
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { destination in
            unmask(into: destination)
            return count
        }
    }

    /// The unmasked payload as a buffer of its own.
    func unmasked(allocator: ByteBufferAllocator) -> ByteBuffer {
        var buffer = allocator.buffer(capacity: payload.readableBytes)
        appendUnmasked(to: &buffer)
        return buffer
    }
}
