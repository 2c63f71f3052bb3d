/// Milliseconds from a call's start to each stage, first occurrence only.
///
/// The spec's stages have a slot each, so recording one on the path of every call allocates nothing; the
/// dictionary form is built only when asked for (the connected event info).
package struct CostMap: Sendable, Equatable {
    static let remoteUserRecvCall = "remoteUserRecvCall"
    static let acceptCall = "acceptCall"
    static let localUserJoinChannel = "localUserJoinChannel"
    static let localFirstFrameDidCapture = "localFirstFrameDidCapture"
    static let localFirstFrameDidPublish = "localFirstFrameDidPublish"
    static let remoteUserJoinChannel = "remoteUserJoinChannel"
    static let recvFirstFrame = "recvFirstFrame"

    /// The stages the machine records, in the spec's order.
    enum Stage: Int, CaseIterable, Sendable {
        case remoteUserRecvCall, acceptCall, localUserJoinChannel, localFirstFrameDidCapture
        case localFirstFrameDidPublish, remoteUserJoinChannel, recvFirstFrame

        var name: String {
            switch self {
            case .remoteUserRecvCall: CostMap.remoteUserRecvCall
            case .acceptCall: CostMap.acceptCall
            case .localUserJoinChannel: CostMap.localUserJoinChannel
            case .localFirstFrameDidCapture: CostMap.localFirstFrameDidCapture
            case .localFirstFrameDidPublish: CostMap.localFirstFrameDidPublish
            case .remoteUserJoinChannel: CostMap.remoteUserJoinChannel
            case .recvFirstFrame: CostMap.recvFirstFrame
            }
        }

        /// `allCases` builds its array on every use; this one is built once.
        static let all = allCases

        init?(name: String) {
            guard let stage = Self.all.first(where: { $0.name == name }) else { return nil }
            self = stage
        }
    }

    // One slot per stage, with a bit each saying whether it was recorded: seven optionals took twice the
    // room, and the map is copied with the call on every input. A slot whose bit is clear stays 0, so
    // comparing every slot compares what was recorded.
    private var millis: (Int64, Int64, Int64, Int64, Int64, Int64, Int64) = (0, 0, 0, 0, 0, 0, 0)
    private var recorded: UInt8 = 0
    /// Stages by any other name (none in the machine's use).
    private var others: [String: Int64] = [:]

    /// The milliseconds recorded for `stage`, if it occurred.
    subscript(stage: Stage) -> Int64? {
        get {
            guard recorded & (1 << stage.rawValue) != 0 else { return nil }
            return switch stage {
            case .remoteUserRecvCall: millis.0
            case .acceptCall: millis.1
            case .localUserJoinChannel: millis.2
            case .localFirstFrameDidCapture: millis.3
            case .localFirstFrameDidPublish: millis.4
            case .remoteUserJoinChannel: millis.5
            case .recvFirstFrame: millis.6
            }
        }
        set {
            let value = newValue ?? 0
            switch stage {
            case .remoteUserRecvCall: millis.0 = value
            case .acceptCall: millis.1 = value
            case .localUserJoinChannel: millis.2 = value
            case .localFirstFrameDidCapture: millis.3 = value
            case .localFirstFrameDidPublish: millis.4 = value
            case .remoteUserJoinChannel: millis.5 = value
            case .recvFirstFrame: millis.6 = value
            }
            if newValue == nil {
                recorded &= ~(1 << stage.rawValue)
            } else {
                recorded |= 1 << stage.rawValue
            }
        }
    }

    /// Every recorded stage by name.
    var stages: [String: Int64] {
        var stages = others
        for stage in Stage.all {
            if let millis = self[stage] { stages[stage.name] = millis }
        }
        return stages
    }

    mutating func record(_ stage: Stage, startedAt: Int64, now: Int64) {
        if self[stage] == nil { self[stage] = max(0, now - startedAt) }
    }

    mutating func record(_ name: String, startedAt: Int64, now: Int64) {
        if let stage = Stage(name: name) {
            record(stage, startedAt: startedAt, now: now)
        } else if others[name] == nil {
            others[name] = max(0, now - startedAt)
        }
    }

    var json: JSONValue {
        var object = [String: JSONValue](minimumCapacity: Stage.all.count + others.count)
        for (name, millis) in others { object[name] = .int(Int(millis)) }
        for stage in Stage.all {
            if let millis = self[stage] { object[stage.name] = .int(Int(millis)) }
        }
        return .object(object)
    }
}

extension CostMap {
    package static func == (lhs: CostMap, rhs: CostMap) -> Bool {
        lhs.recorded == rhs.recorded && lhs.others == rhs.others && Stage.all.allSatisfy { lhs[$0] == rhs[$0] }
    }
}
