import CallAPISignalProtocol
import Logging
import NIOCore

/// An RTC channel connection's shell: runs ``RTCChannelMachine`` and performs its outputs (the socket, events, logs).
/// Confined to one event loop, its socket's (``LoopCommands``).
final class RTCChannelCore: ClientSocketDelegate {
    private let loop: any EventLoop
    private var machine: RTCChannelMachine
    private let logger: Logger
    private let gate: RTCChannelEventGate
    private var socket: ClientSocket?
    /// The current socket's number: what an earlier socket (before a redirect) reports is ignored.
    private var socketNumber = 0

    init(
        url: String, channel: String, uid: UInt, device: String?, token: String, gate: RTCChannelEventGate,
        loop: any EventLoop, logger: Logger
    ) {
        self.loop = loop
        machine = RTCChannelMachine(url: url, channel: channel, uid: uid, device: device, token: token)
        self.gate = gate
        var logger = logger
        logger[metadataKey: "channel"] = "\(channel)"
        logger[metadataKey: "uid"] = "\(uid)"
        if let device { logger[metadataKey: "device"] = "\(device)" }
        self.logger = logger
    }

    func start() { handle(.start) }
    func send(data: String, to member: ChannelMember) { handle(.send(data: data, to: member)) }
    func renew(token: String) { handle(.renew(token: token)) }
    func leave() { handle(.leave) }

    func socketOpened(_ socket: Int) {
        guard socket == socketNumber else { return }
        handle(.socketOpened)
    }

    func received(utf8 text: UnsafeBufferPointer<UInt8>, socket: Int) {
        guard socket == socketNumber else { return }
        // Channel frames are few (join, leave, notices): read from a `String`, invalid UTF-8 replaced.
        switch ChannelFrameCoding.decodeServerFrame(String(decoding: text, as: UTF8.self)) {
        case .success(let frame): handle(.received(frame))
        case .failure(let error): handle(.unreadable("\(error)"))
        }
    }

    func socketClosed(_ socket: Int, cause: String) {
        guard socket == socketNumber else { return }
        self.socket = nil
        handle(.socketClosed(cause: cause))
    }

    private func handle(_ input: RTCChannelMachine.Input) {
        for output in machine.handle(input) {
            switch output {
            case .openSocket(let url):
                socketNumber += 1
                socket = ClientSocket(id: socketNumber, url: url, loop: loop, delegate: self, logger: logger)
            case .write(let frame):
                socket?.write(ChannelFrameCoding.encode(frame))
            case .closeSocket:
                socket?.close()
                socket = nil
            case .emit(let event):
                logger.debug("channel event", metadata: ["event": "\(event)"])
                gate.deliver(event)
            case .log(.info, let message):
                logger.info("\(message)")
            case .log(.warning, let message):
                logger.warning("\(message)")
            }
        }
    }
}
