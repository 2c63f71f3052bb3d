extension ClientFrame {
    /// `calls`: a page of the logged-in user's calls from the server's call ledger, newest first. With `missed`,
    /// only calls the user missed as callee (``CallOutcome/missedByCallee``).
    public struct CallsRequest: Codable, Sendable, Equatable {
        public var id: Int?
        /// Only missed calls.
        public var missed: Bool?
        /// Only calls started at or after this time (ms since 1970, server clock).
        public var since: Int64?
        /// At most this many (1...200; default 50).
        public var limit: Int?
        /// The `nextCursor` of the previous page.
        public var cursor: String?

        public init(id: Int? = nil, missed: Bool? = nil, since: Int64? = nil, limit: Int? = nil, cursor: String? = nil)
        {
            self.id = id
            self.missed = missed
            self.since = since
            self.limit = limit
            self.cursor = cursor
        }
    }
}

extension ServerFrame {
    /// `calls`: a page of the user's calls; `nextCursor` asks for the next one (absent on the last page).
    public struct CallsPage: Codable, Sendable, Equatable {
        public var id: Int?
        public var calls: [CallRecord]
        public var nextCursor: String?

        public init(id: Int?, calls: [CallRecord], nextCursor: String?) {
            self.id = id
            self.calls = calls
            self.nextCursor = nextCursor
        }
    }
}
