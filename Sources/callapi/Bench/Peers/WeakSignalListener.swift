import CallAPI

/// A signaling listener held weakly, as ``ISignalClient/addListener(listener:)`` asks.
struct WeakSignalListener: Sendable {
    weak var listener: (any ISignalClientListener)?
}
