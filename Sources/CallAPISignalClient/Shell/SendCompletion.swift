/// Who hears how a send ended: the async API's waiter, which wants the outcome, or CallAPI's `ISignalClient`
/// callback, which wants an error or nil (and may be absent). Stored as given: wrapping the callback in a closure
/// that maps the outcome was an allocation per message sent.
enum SendCompletion: Sendable {
    case outcome(@Sendable (Result<SendOutcome, SignalClientError>) -> Void)
    case error((@Sendable ((any Error)?) -> Void)?)

    func complete(_ result: Result<SendOutcome, SignalClientError>) {
        switch self {
        case .outcome(let completion):
            completion(result)
        case .error(let completion):
            switch result {
            case .success: completion?(nil)
            case .failure(let error): completion?(error)
            }
        }
    }
}
