import CallAPI
import CallAPISignalProtocol
import Logging

/// Reports each call of a CallAPI endpoint to the server's ledger when it ends: every state, event and error the
/// endpoint reported, stamped on the signaling client's clock, with that clock's offset to the server's, so that the
/// server can put both sides of the call on one time line (docs/timeline.md).
///
/// ```swift
/// let reporter = CallReporter(api: api, signal: signal)
/// api.addListener(listener: reporter)   // held weakly by the endpoint: keep the reporter
/// ```
///
/// Given the endpoint's engine, it also keeps the engine's quality samples of the call's room
/// (``RTCEngineEvent/remoteQuality(channel:uid:_:)``), the latest ``CallReport/maxQualitySamples``.
///
/// A call's marks start when it starts (`calling`) and are sent when the endpoint is back to `prepared` (or
/// `failed`); a call with more than ``CallReport/maxEvents`` marks keeps its first ones and says it was cut. A report
/// the server refuses, or that cannot be sent, is logged (and given to `onSent`); the call is not affected.
public final class CallReporter: CallApiListenerProtocol {
    private struct Recording: Sendable {
        var callId: String
        var marks: [CallReport.Mark]
        var quality: [CallReport.QualitySample] = []
    }

    private let signal: SignalClient
    private let device: String
    private let callId: @Sendable () -> String
    private let room: @Sendable () -> String
    private let engine: (any CallRTCEngine)?
    private let engineListener: RTCEventListenerToken?
    private let logger: Logger
    private let onSent: @Sendable (CallReport, (any Error)?) -> Void
    /// The call being recorded, if one is.
    private let recording = Locked<Recording?>(nil)

    /// A reporter for `api`'s calls through `signal` (logged in as the same user), with the quality samples of
    /// `engine` (the endpoint's) when given. `onSent` hears each report once the server kept it (error `nil`) or
    /// refused it.
    public init(
        api: CallApiImpl, signal: SignalClient, engine: (any CallRTCEngine)? = nil,
        logger: Logger = Logger(label: "callapi.reporter"),
        onSent: @escaping @Sendable (CallReport, (any Error)?) -> Void = { _, _ in }
    ) {
        self.signal = signal
        device = api.deviceId
        callId = { [weak api] in api?.getCallId() ?? "" }
        room = { [weak api] in api?.getRoomId() ?? "" }
        self.logger = logger
        self.onSent = onSent
        self.engine = engine
        let recording = self.recording
        let (now, room) = (signal.now, room)
        engineListener = engine?.addEventListener { event in
            guard case .remoteQuality(let channel, let uid, let quality) = event, channel == room() else { return }
            let sample = CallReport.QualitySample(at: now(), peer: uid, quality: quality)
            recording.withLock { recording in
                guard recording != nil else { return }
                if recording?.quality.count == CallReport.maxQualitySamples { recording?.quality.removeFirst() }
                recording?.quality.append(sample)
            }
        }
    }

    deinit {
        if let engineListener { engine?.removeEventListener(engineListener) }
    }

    public func onCallStateChanged(
        with state: CallStateType, stateReason: CallStateReason, eventReason: String, eventInfo: [String: Any]
    ) {
        let at = signal.now()
        let mark = CallReport.Mark(name: "state.\(state)", at: at, detail: "\(stateReason)")
        switch state {
        case .calling:
            // The call message's id, from the change itself: listeners hear changes after the fact, and by then the
            // endpoint may have moved on (a call answered and hung up at once has no id left to ask for).
            let id = (eventInfo[kCallId] as? String) ?? callId()
            recording.withLock { recording in
                if recording?.callId != id { recording = Recording(callId: id, marks: []) }
                Self.append(mark, to: &recording)
            }
        case .prepared, .failed, .idle:
            guard
                let ended = recording.withLock({ recording -> Recording? in
                    Self.append(mark, to: &recording)
                    defer { recording = nil }
                    return recording
                })
            else { return }
            send(ended)
        default:
            recording.withLock { Self.append(mark, to: &$0) }
        }
    }

    public func onCallEventChanged(with event: CallEvent, eventReason: String?) {
        let mark = CallReport.Mark(name: "event.\(event)", at: signal.now(), detail: Self.detail(eventReason))
        recording.withLock { Self.append(mark, to: &$0) }
    }

    public func onCallError(
        with errorEvent: CallErrorEvent, errorType: CallErrorCodeType, errorCode: Int, message: String?
    ) {
        let mark = CallReport.Mark(
            name: "error.\(errorEvent)", at: signal.now(),
            detail: Self.detail("\(errorType) \(errorCode) \(message ?? "")"))
        recording.withLock { Self.append(mark, to: &$0) }
    }

    private static func append(_ mark: CallReport.Mark, to recording: inout Recording?) {
        guard recording != nil else { return }
        let room = CallReport.maxEvents - (recording?.marks.count ?? 0)
        if room > 1 {
            recording?.marks.append(mark)
        } else if room == 1 {
            recording?.marks.append(
                CallReport.Mark(name: "report.cut", at: mark.at, detail: "more marks than a report carries"))
        }
    }

    private static func detail(_ text: String?) -> String? {
        guard let text, !text.isEmpty else { return nil }
        return String(text.prefix(CallReport.maxDetailLength))
    }

    private func send(_ recording: Recording) {
        let (signal, device, logger, onSent) = (signal, device, logger, onSent)
        Task {
            guard let clock = await signal.clockOffset else {
                logger.warning(
                    "call report not sent: the client never logged in", metadata: ["callId": "\(recording.callId)"])
                return
            }
            let report = CallReport(
                callId: recording.callId, device: device, clock: clock, events: recording.marks,
                quality: recording.quality)
            do {
                try await signal.report(report)
                onSent(report, nil)
            } catch {
                logger.warning("call report not kept: \(error)", metadata: ["callId": "\(recording.callId)"])
                onSent(report, error)
            }
        }
    }
}
