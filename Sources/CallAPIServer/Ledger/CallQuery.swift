import CallAPIServerCore
import CallAPISignalProtocol

/// Which of a user's calls to list: newest first (by start), `limit` at a time, continuing after `cursor`.
public struct CallQuery: Sendable, Equatable {
    /// Whose calls (as caller or callee).
    public var userId: String
    /// Only these outcomes (empty: all).
    public var outcomes: [CallOutcome]
    /// Only calls where the user was the callee.
    public var asCalleeOnly: Bool
    /// Only calls started at or after this time (ms since 1970).
    public var since: Int64?
    /// Only calls started before this time.
    public var until: Int64?
    /// At most this many (1...``maxLimit``).
    public var limit: Int
    /// Continue after this page (from ``CallPage/nextCursor``).
    public var cursor: CallCursor?

    /// The largest page.
    public static let maxLimit = 200

    public init(
        userId: String, outcomes: [CallOutcome] = [], asCalleeOnly: Bool = false, since: Int64? = nil,
        until: Int64? = nil, limit: Int = 50, cursor: CallCursor? = nil
    ) {
        self.userId = userId
        self.outcomes = outcomes
        self.asCalleeOnly = asCalleeOnly
        self.since = since
        self.until = until
        self.limit = min(max(1, limit), Self.maxLimit)
        self.cursor = cursor
    }

    /// A user's missed calls (``CallOutcome/missedByCallee`` as callee) since `since`.
    public static func missed(userId: String, since: Int64?, limit: Int = 50, cursor: CallCursor? = nil) -> CallQuery {
        CallQuery(
            userId: userId, outcomes: CallOutcome.missedByCallee, asCalleeOnly: true, since: since, limit: limit,
            cursor: cursor)
    }
}

/// Where a page of calls ended: the last call's start time and id (calls are ordered by both, newest first).
public struct CallCursor: Sendable, Equatable, CustomStringConvertible {
    public var startedAt: Int64
    public var callId: String

    public init(startedAt: Int64, callId: String) {
        self.startedAt = startedAt
        self.callId = callId
    }

    /// `<startedAt>.<callId>`, the form clients hand back.
    public var description: String { "\(startedAt).\(callId)" }

    /// Reads ``description``; `nil` when `text` is not a cursor.
    public init?(_ text: String) {
        guard let dot = text.firstIndex(of: "."), let startedAt = Int64(text[..<dot]) else { return nil }
        let callId = String(text[text.index(after: dot)...])
        guard !callId.isEmpty else { return nil }
        self.init(startedAt: startedAt, callId: callId)
    }
}

/// A page of calls and the cursor for the next one (`nil`: this was the last).
public struct CallPage: Sendable, Equatable {
    public var calls: [CallRecord]
    public var nextCursor: CallCursor?

    public init(calls: [CallRecord], nextCursor: CallCursor?) {
        self.calls = calls
        self.nextCursor = nextCursor
    }
}
