/// CallAPI's listener on the signaling client: hands what the channel delivers to its endpoint's input queue.
///
/// An object of its own, not ``CallApiImpl`` itself, so that "a message arrived" and the channel's debug text
/// are not something an app can call on the endpoint (it could otherwise inject messages as if received).
final class CallSignalListener: ISignalClientListener {
    /// Weak: the endpoint keeps this listener (signaling clients hold theirs weakly), not the other way round.
    private weak let api: CallApiImpl?

    init(api: CallApiImpl) {
        self.api = api
    }

    func onMessageReceive(message: String) {
        api?.received(message, from: nil)
    }

    func onMessageReceive(message: String, from sender: SignalSender) {
        api?.received(message, from: sender)
    }

    func debugInfo(message: String, logLevel: Int) {
        api?.signalDebugInfo(message: message, logLevel: logLevel)
    }
}
