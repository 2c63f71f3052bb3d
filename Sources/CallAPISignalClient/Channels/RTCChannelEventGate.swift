import Foundation

/// Hands events to the app's handler until the connection is left: once ``close()`` returns, no event is being
/// delivered and none will be. Reentrant, so the handler may call `leave()` itself.
final class RTCChannelEventGate: @unchecked Sendable {
    private let lock = NSRecursiveLock()
    private var handler: (@Sendable (RTCChannelClientEvent) -> Void)?

    init(_ handler: @escaping @Sendable (RTCChannelClientEvent) -> Void) {
        self.handler = handler
    }

    func deliver(_ event: RTCChannelClientEvent) {
        lock.lock()
        defer { lock.unlock() }
        handler?(event)
    }

    func close() {
        lock.lock()
        defer { lock.unlock() }
        handler = nil
    }
}
