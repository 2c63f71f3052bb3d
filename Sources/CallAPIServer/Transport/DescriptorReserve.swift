import CallAPIServerCore
import Logging
import NIOCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The listening socket's first handler: keeps one spare file descriptor so that running out of descriptors pauses
/// accepting instead of spinning.
///
/// When `accept` fails with `EMFILE`/`ENFILE` the connection stays in the backlog and the socket stays readable;
/// SwiftNIO's `AcceptBackoffHandler` (which the bootstrap installs) only delays the *next* read, and with the failed
/// read still pending the event loop retried `accept` about 24,000 times a second (measured with strace). So on that
/// error this handler frees its spare descriptor: the next `accept` succeeds, that connection is closed at once (the
/// client hears a close instead of waiting in the backlog), the read completes, and the back-off's pause takes
/// effect. The spare is taken again when accepting resumes.
final class DescriptorReserve: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = any Channel
    typealias InboundOut = any Channel
    typealias OutboundIn = any Channel

    private enum Phase {
        /// Holding the spare descriptor.
        case armed(spare: CInt)
        /// Out of descriptors: the spare was freed; connections accepted now are closed at once.
        case draining
        /// No spare could be opened (the limit was already reached).
        case unarmed
    }

    private var phase: Phase
    private let logger: Logger

    init(logger: Logger) {
        self.logger = logger
        phase = Self.openSpare().map { .armed(spare: $0) } ?? .unarmed
    }

    deinit {
        if case .armed(let spare) = phase { Self.closeSpare(spare) }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let error = error as? IOError, error.errnoCode == EMFILE || error.errnoCode == ENFILE {
            if case .armed(let spare) = phase {
                Self.closeSpare(spare)
                phase = .draining
                logger.warning(
                    "out of file descriptors: new connections are closed at once and accepting pauses",
                    metadata: ["error": "\(error)"])
            }
        }
        context.fireErrorCaught(error)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .draining = phase else { return context.fireChannelRead(data) }
        let child = unwrapInboundIn(data)
        child.close(promise: nil)
    }

    func read(context: ChannelHandlerContext) {
        // Accepting resumes (after the back-off's pause): take the spare again if a descriptor is free.
        switch phase {
        case .draining, .unarmed:
            if let spare = Self.openSpare() { phase = .armed(spare: spare) }
        case .armed:
            break
        }
        context.read()
    }

    private static func closeSpare(_ descriptor: CInt) {
        #if canImport(Glibc)
            _ = Glibc.close(descriptor)
        #else
            _ = Darwin.close(descriptor)
        #endif
    }

    private static func openSpare() -> CInt? {
        let descriptor = open("/dev/null", O_RDONLY | O_CLOEXEC)
        return descriptor >= 0 ? descriptor : nil
    }
}
