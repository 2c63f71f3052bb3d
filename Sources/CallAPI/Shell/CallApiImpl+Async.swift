// `async throws` forms of the completion-based API, for Swift concurrency users.
extension CallApiImpl {
    /// Stores `prepareConfig` and moves to `prepared`.
    public func prepareForCall(prepareConfig: PrepareConfig) async throws {
        try await withCompletion { prepareForCall(prepareConfig: prepareConfig, completion: $0) }
    }

    /// Places a call; returns once the call message was sent.
    public func call(remoteUserId: UInt, callType: CallType = .video, callExtension: [String: JSONValue] = [:])
        async throws
    {
        try await withCompletion {
            call(remoteUserId: remoteUserId, callType: callType, callExtension: callExtension, completion: $0)
        }
    }

    /// Cancels the call this user placed.
    public func cancelCall() async throws {
        try await withCompletion { cancelCall(completion: $0) }
    }

    /// Accepts the call ringing from `remoteUserId`.
    public func accept(remoteUserId: UInt) async throws {
        try await withCompletion { accept(remoteUserId: remoteUserId, completion: $0) }
    }

    /// Rejects the call ringing from `remoteUserId`.
    public func reject(remoteUserId: UInt, reason: String? = nil) async throws {
        try await withCompletion { reject(remoteUserId: remoteUserId, reason: reason, completion: $0) }
    }

    /// Ends the call with `remoteUserId`.
    public func hangup(remoteUserId: UInt, reason: String? = nil) async throws {
        try await withCompletion { hangup(remoteUserId: remoteUserId, reason: reason, completion: $0) }
    }

    /// Ends any call and returns to `idle`.
    public func deinitialize() async {
        await withCheckedContinuation { continuation in deinitialize { continuation.resume() } }
    }

    private func withCompletion(_ start: (@escaping @Sendable ((any Error)?) -> Void) -> Void) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            start { error in
                if let error { continuation.resume(throwing: error) } else { continuation.resume() }
            }
        }
    }
}
