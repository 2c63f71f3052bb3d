/// Limits of the match queue that client and server share (docs/match.md).
public enum MatchProtocol {
    /// Tags one entry may carry at most.
    public static let maxTags = 8
    /// The longest tag, in bytes of UTF-8.
    public static let maxTagBytes = 64

    /// Why `tags` cannot enter the queue, or `nil` when they can: 1 to ``maxTags`` tags, each 1 to
    /// ``maxTagBytes`` bytes without control characters, no repeats.
    public static func tagsProblem(_ tags: [String]) -> String? {
        guard !tags.isEmpty else { return "\"tags\" must name at least one tag" }
        guard tags.count <= maxTags else { return "\"tags\" has \(tags.count) tags; the limit is \(maxTags)" }
        for tag in tags {
            guard !tag.isEmpty, tag.utf8.count <= maxTagBytes else {
                return "each tag must be 1-\(maxTagBytes) bytes; \"\(tag.prefix(80))\" is not"
            }
            guard !tag.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
                return "tags must not contain control characters"
            }
        }
        guard Set(tags).count == tags.count else { return "\"tags\" names a tag twice" }
        return nil
    }
}

/// Which side of a server-placed call a user is on.
public enum MatchRole: String, Codable, Sendable, Equatable {
    /// This user's client places the call.
    case caller
    /// This user's client receives the call.
    case callee
}

extension ClientFrame {
    /// `match_enter`: wait in the match queue for a user who shares one of `tags`. The server answers
    /// `match_queue` (waiting) or `error`; a `matched` frame follows when a peer is found.
    public struct MatchEnter: Codable, Sendable, Equatable {
        public var id: Int?
        /// What the user is matched on (a city, an interest), in the user's order of preference.
        public var tags: [String]
        public init(id: Int? = nil, tags: [String]) {
            self.id = id
            self.tags = tags
        }
    }
}

extension ServerFrame {
    /// `place_call`: the server asks this session's client to place a call now, with the server's `callId`. Only
    /// the server sends this frame, so a client can trust it came from the business server or the match queue.
    public struct PlaceCall: Codable, Sendable, Equatable {
        /// The id the call must use (the server answered it to whoever asked for the call).
        public var callId: String
        /// The user to call.
        public var callee: String
        /// A video call (`false`: audio only).
        public var video: Bool
        /// The match the call is for, when the match queue placed it.
        public var matchId: String?
        /// The tag the match was made on.
        public var tag: String?
        /// Always `"server"`: the instruction comes from the server, never from another user.
        public var placedBy: String
        public init(
            callId: String, callee: String, video: Bool, matchId: String? = nil, tag: String? = nil,
            placedBy: String = "server"
        ) {
            self.callId = callId
            self.callee = callee
            self.video = video
            self.matchId = matchId
            self.tag = tag
            self.placedBy = placedBy
        }
    }

    /// `matched`: the match queue paired this user with `peer` on `tag`. The caller's session gets `place_call`
    /// right after; the callee's client knows from `callId` which incoming call is the match's.
    public struct Matched: Codable, Sendable, Equatable {
        public var matchId: String
        public var peer: String
        public var tag: String
        /// The id of the call the server places for the match.
        public var callId: String
        /// Whether this user places the call (the one who waited longer) or receives it.
        public var role: MatchRole
        public init(matchId: String, peer: String, tag: String, callId: String, role: MatchRole) {
            self.matchId = matchId
            self.peer = peer
            self.tag = tag
            self.callId = callId
            self.role = role
        }
    }

    /// `match_queue`: the answer to `match_enter` (`waiting` true, with the tags) and `match_leave` (`waiting`
    /// false).
    public struct MatchQueue: Codable, Sendable, Equatable {
        public var id: Int?
        /// Whether this session waits in the queue now.
        public var waiting: Bool
        /// The tags it waits with (empty when not waiting).
        public var tags: [String]
        public init(id: Int?, waiting: Bool, tags: [String]) {
            self.id = id
            self.waiting = waiting
            self.tags = tags
        }
    }
}
