import CallAPI

// Secondary channels (a showroom beside the call): each one an engine of its own, created on join and
// dropped on leave, whose events this engine reports on its own queue.
extension WebRTCEngine {
    public func joinSecondaryChannel(_ channel: String, token: String, uid: UInt, media: RTCMediaOptions) {
        queue.async { [self] in
            let inCall = state.withLock { $0.session?.channel == channel }
            let engine = secondaries.withLock { engines -> WebRTCEngine? in
                guard !inCall, engines[channel] == nil else { return nil }
                let engine = WebRTCEngine(
                    transport: transport, sources: secondarySources, label: "\(label).\(channel)", ice: ice,
                    device: device, qualityIntervalMillis: qualityIntervalMillis)
                engines[channel] = engine
                return engine
            }
            guard let engine else { return rejectJoin(channel) }
            engine.addEventListener { [weak self] event in
                guard let self else { return }
                queue.async { self.emit(event) }
            }
            engine.joinChannel(channel, token: token, uid: uid, media: media)
        }
    }

    public func updateSecondaryChannelMedia(_ channel: String, media: RTCMediaOptions) {
        queue.async { [self] in secondaries.withLock { $0[channel] }?.updateMedia(media) }
    }

    public func leaveSecondaryChannel(_ channel: String) {
        // The engine reports its `localLeft` and is released once its queue has run the leave.
        queue.async { [self] in secondaries.withLock { $0.removeValue(forKey: channel) }?.leaveChannel() }
    }

    /// Reports that `channel` cannot be joined: this engine is in it already. Call on the queue.
    func rejectJoin(_ channel: String) {
        emit(
            .joinFailed(
                channel: channel, code: WebRTCEngineError.Code.alreadyInChannel.rawValue,
                message: "already in channel \(channel)"))
    }
}
