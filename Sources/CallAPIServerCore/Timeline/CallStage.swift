import CallAPISignalProtocol

/// The stages of a call whose latency the server keeps as histograms (`callapi_call_stage_seconds{stage=…}`) and
/// shows on a call's time line: each measured on one device's clock, between two of its marks, so no clock offset
/// enters it.
public enum CallStage: String, Sendable, CaseIterable, Codable {
    /// From the call starting on the device (it calls, or it rings) to the device joining the room.
    case join
    /// From the call starting on the device to the peer's first frame decoded there.
    case firstFrame
    /// From the accept (sent or received) to the call connected on the device.
    case acceptToConnected
    /// From the device ringing to its user answering (the callee's side).
    case ringToAnswer

    /// The marks the stage runs between: the first of `from`, then the first of `to` after it.
    var marks: (from: [String], to: [String]) {
        switch self {
        case .join: (["state.calling"], ["event.localJoined"])
        case .firstFrame: (["state.calling"], ["event.recvRemoteFirstFrame"])
        case .acceptToConnected: (["event.localAccepted", "event.remoteAccepted"], ["state.connected"])
        case .ringToAnswer: (["event.remoteVideoCall", "event.remoteAudioCall"], ["event.localAccepted"])
        }
    }

    /// The stages `report` shows, and how long each took in milliseconds, in the order of ``allCases``.
    public static func latencies(in report: CallReport) -> [(stage: CallStage, millis: Int64)] {
        allCases.compactMap { stage in
            let (from, to) = stage.marks
            guard let start = report.events.first(where: { from.contains($0.name) }),
                let end = report.events.first(where: { to.contains($0.name) && $0.at >= start.at })
            else { return nil }
            return (stage, end.at - start.at)
        }
    }
}
