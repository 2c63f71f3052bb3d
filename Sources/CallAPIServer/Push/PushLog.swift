import CallAPISignalProtocol
import DequeModule
import NIOConcurrencyHelpers

/// The latest push attempts of this node, for the console's page of a call: which device of which user was pushed,
/// when, and how it went. In memory and bounded (the oldest attempts are forgotten first); `callapi_pushes_total`
/// counts them all.
public final class PushLog: Sendable {
    /// One attempt at one device.
    public struct Attempt: Sendable, Equatable {
        public var at: Int64
        public var callId: String
        public var userId: String
        public var deviceId: String
        public var platform: PushDevice.Platform
        /// 1 for the first try.
        public var attempt: Int
        public var outcome: PushOutcome
    }

    /// How many attempts are kept.
    public static let capacity = 10_000

    private let attempts = NIOLockedValueBox(Deque<Attempt>())

    init() {}

    func record(_ attempt: Attempt) {
        attempts.withLockedValue { attempts in
            if attempts.count == Self.capacity { attempts.removeFirst() }
            attempts.append(attempt)
        }
    }

    /// The attempts for `callId` still kept, oldest first.
    public func attempts(callId: String) -> [Attempt] {
        attempts.withLockedValue { $0.filter { $0.callId == callId } }
    }
}
