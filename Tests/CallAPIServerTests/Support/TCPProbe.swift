#if canImport(Glibc)
    import Foundation
    import Glibc

    /// A plain blocking TCP socket to the test server, for byte-level probes the WebSocket client cannot make
    /// (half request heads, unmasked frames, invalid UTF-8, a reader that never reads). Every read has a deadline.
    struct TCPProbe: Sendable {
        private let descriptor: Int32

        struct Failure: Error, CustomStringConvertible {
            var description: String
        }

        /// Connects to 127.0.0.1:`port`; `receiveBuffer` shrinks the socket's receive buffer first.
        init(port: Int, receiveBuffer: Int32? = nil) throws {
            descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard descriptor >= 0 else { throw Failure(description: "socket() failed") }
            // Writes never block for long: a probe whose peer stopped reading gets an error instead.
            var sendTimeout = timeval(tv_sec: 2, tv_usec: 0)
            setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &sendTimeout, socklen_t(MemoryLayout<timeval>.size))
            if var size = receiveBuffer {
                setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
            }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard connected == 0 else {
                Glibc.close(descriptor)
                throw Failure(description: "connect() failed")
            }
        }

        func write(_ bytes: [UInt8]) throws {
            var offset = 0
            while offset < bytes.count {
                let sent = bytes[offset...].withUnsafeBytes {
                    send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
                }
                guard sent > 0 else { throw Failure(description: "send() failed") }
                offset += sent
            }
        }

        func write(_ text: String) throws { try write(Array(text.utf8)) }

        /// Reads what arrives within `seconds`: the bytes, and whether the server closed the connection. The blocking
        /// reads run on a thread of their own, never on the concurrency pool (which the in-process server needs).
        func read(seconds: Double, until done: @escaping @Sendable ([UInt8]) -> Bool = { _ in false }) async -> (
            bytes: [UInt8], closed: Bool
        ) {
            let descriptor = descriptor
            return await withCheckedContinuation { continuation in
                Thread {
                    continuation.resume(returning: Self.blockingRead(descriptor, seconds: seconds, until: done))
                }.start()
            }
        }

        /// Reads on the calling thread (for probes that run on threads of their own).
        func readNow(seconds: Double) -> (bytes: [UInt8], closed: Bool) {
            Self.blockingRead(descriptor, seconds: seconds, until: { _ in false })
        }

        private static func blockingRead(_ descriptor: Int32, seconds: Double, until done: ([UInt8]) -> Bool) -> (
            bytes: [UInt8], closed: Bool
        ) {
            var timeout = timeval(tv_sec: 0, tv_usec: 100_000)
            setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65_536)
            let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
            while ContinuousClock.now < deadline {
                let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
                if count == 0 { return (received, true) }
                if count < 0 {
                    if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { continue }
                    return (received, true)  // reset by the server
                }
                received += buffer[0..<count]
                if done(received) { return (received, false) }
            }
            return (received, false)
        }

        /// Sends a WebSocket upgrade for `path` and reads the response head.
        func upgrade(path: String) async throws {
            try write(Self.upgradeRequest(path: path))
            let response = await read(seconds: 5) { $0.suffix(4) == [13, 10, 13, 10] }
            guard String(decoding: response.bytes, as: UTF8.self).hasPrefix("HTTP/1.1 101") else {
                throw Failure(description: "no 101 response: \(String(decoding: response.bytes, as: UTF8.self))")
            }
        }

        /// ``upgrade(path:)`` on the calling thread (for probes that run on threads of their own).
        func writeUpgrade(path: String) throws {
            try write(Self.upgradeRequest(path: path))
            let response = Self.blockingRead(descriptor, seconds: 5) { $0.suffix(4) == [13, 10, 13, 10] }
            guard String(decoding: response.bytes, as: UTF8.self).hasPrefix("HTTP/1.1 101") else {
                throw Failure(description: "no 101 response")
            }
        }

        static func upgradeRequest(path: String) -> String {
            "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        }

        /// A client WebSocket frame (FIN set), masked unless `masked` is false.
        static func frame(opcode: UInt8, payload: [UInt8], masked: Bool = true) -> [UInt8] {
            var frame: [UInt8] = [0x80 | opcode]
            let maskBit: UInt8 = masked ? 0x80 : 0
            switch payload.count {
            case 0..<126: frame.append(maskBit | UInt8(payload.count))
            case 126..<65_536: frame += [maskBit | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
            default: frame += [maskBit | 127] + (0..<8).reversed().map { UInt8((payload.count >> ($0 * 8)) & 0xFF) }
            }
            guard masked else { return frame + payload }
            let key: [UInt8] = [0x12, 0x34, 0x56, 0x78]
            return frame + key + payload.enumerated().map { $0.element ^ key[$0.offset % 4] }
        }

        func close() { _ = Glibc.close(descriptor) }
    }
#endif
