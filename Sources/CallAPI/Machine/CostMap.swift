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

    private var remoteUserRecvCall: Int64?
    private var acceptCall: Int64?
    private var localUserJoinChannel: Int64?
    private var localFirstFrameDidCapture: Int64?
    private var localFirstFrameDidPublish: Int64?
    private var remoteUserJoinChannel: Int64?
    private var recvFirstFrame: Int64?
    /// Stages by any other name (none in the machine's use).
    private var others: [String: Int64] = [:]

    /// The milliseconds recorded for `stage`, if it occurred.
    subscript(stage: Stage) -> Int64? {
        get {
            switch stage {
            case .remoteUserRecvCall: remoteUserRecvCall
            case .acceptCall: acceptCall
            case .localUserJoinChannel: localUserJoinChannel
            case .localFirstFrameDidCapture: localFirstFrameDidCapture
            case .localFirstFrameDidPublish: localFirstFrameDidPublish
            case .remoteUserJoinChannel: remoteUserJoinChannel
            case .recvFirstFrame: recvFirstFrame
            }
        }
        set {
            switch stage {
            case .remoteUserRecvCall: remoteUserRecvCall = newValue
            case .acceptCall: acceptCall = newValue
            case .localUserJoinChannel: localUserJoinChannel = newValue
            case .localFirstFrameDidCapture: localFirstFrameDidCapture = newValue
            case .localFirstFrameDidPublish: localFirstFrameDidPublish = newValue
            case .remoteUserJoinChannel: remoteUserJoinChannel = newValue
            case .recvFirstFrame: recvFirstFrame = newValue
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
