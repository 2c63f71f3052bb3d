/// Milliseconds from a call's start to each stage, first occurrence only.
package struct CostMap: Sendable, Equatable {
    static let remoteUserRecvCall = "remoteUserRecvCall"
    static let acceptCall = "acceptCall"
    static let localUserJoinChannel = "localUserJoinChannel"
    static let localFirstFrameDidCapture = "localFirstFrameDidCapture"
    static let localFirstFrameDidPublish = "localFirstFrameDidPublish"
    static let remoteUserJoinChannel = "remoteUserJoinChannel"
    static let recvFirstFrame = "recvFirstFrame"

    private(set) var stages: [String: Int64] = [:]

    mutating func record(_ stage: String, startedAt: Int64, now: Int64) {
        if stages[stage] == nil { stages[stage] = max(0, now - startedAt) }
    }

    var json: JSONValue { .object(stages.mapValues { .int(Int($0)) }) }
}
