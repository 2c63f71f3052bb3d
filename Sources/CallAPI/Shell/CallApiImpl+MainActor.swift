extension CallApiImpl {
    /// Adds a main-actor listener (a view controller, say), held weakly: every callback reaches it on the main
    /// actor, in order. See ``CallApiMainActorListener``.
    public func addListener(listener: any CallApiMainActorListener) {
        let bridge = mainActorBridges.withLock { bridges in
            bridges = bridges.filter { $0.value.target != nil }
            if let existing = bridges[ObjectIdentifier(listener)] { return existing }
            let bridge = MainActorListenerBridge(listener)
            bridges[ObjectIdentifier(listener)] = bridge
            return bridge
        }
        addListener(listener: bridge as any CallApiListenerProtocol)
    }

    /// Removes a main-actor listener.
    public func removeListener(listener: any CallApiMainActorListener) {
        guard let bridge = mainActorBridges.withLock({ $0.removeValue(forKey: ObjectIdentifier(listener)) }) else {
            return
        }
        removeListener(listener: bridge as any CallApiListenerProtocol)
    }
}
