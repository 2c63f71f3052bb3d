import CallAPIServerCore
import CallAPISignalProtocol

/// The queue of pushes between the hub and the providers, as a pure state machine: a bounded number in flight, a
/// bounded queue, retries with exponential backoff (bounded attempts, never past the ring deadline), and
/// cancellation: a call withdrawn or taken before its push was sent is never pushed.
///
/// Feed it ``Event``s with the time; it returns ``Action``s. ``nextWake`` says when to tick for retries.
package struct PushDispatch: Sendable {
    package struct Settings: Sendable, Equatable {
        /// Pushes sent at once.
        package var maxInFlight = 16
        /// Pushes waiting for a slot or a retry, at most; more are dropped (`overflow`).
        package var maxWaiting = 10_000
        /// Attempts per push, the first included.
        package var maxAttempts = 4
        /// First retry delay; doubles with each attempt.
        package var backoffBaseMillis: Int64 = 250
        /// Longest retry delay.
        package var backoffMaxMillis: Int64 = 4_000
        package init() {}
    }

    /// A push's number in this dispatcher.
    package typealias JobID = Int

    package enum Event: Sendable, Equatable {
        case deliver(PushJob, now: Int64)
        case cancel(callId: String, userId: String, now: Int64)
        case finished(JobID, PushOutcome, now: Int64)
        case tick(now: Int64)
    }

    package enum Action: Sendable, Equatable {
        /// Send attempt number `attempt` (from 1) of `job`, then report ``Event/finished(_:_:now:)``.
        case send(JobID, PushJob, attempt: Int)
        /// The provider rejected the device's token: remove the device.
        case removeDevice(userId: String, deviceId: String, token: String)
        /// Count a push's outcome.
        case count(PushDevice.Platform, PushMetricOutcome)
    }

    /// Where one push stands.
    enum Phase: Sendable, Equatable {
        /// Waiting for a slot.
        case queued
        /// An attempt is running; `cancelled` when its call was withdrawn meanwhile (no retry then).
        case sending(cancelled: Bool)
        /// Waiting to be tried again.
        case backingOff(until: Int64)
    }

    struct Entry: Sendable, Equatable {
        var job: PushJob
        var attempts: Int
        var phase: Phase
    }

    package let settings: Settings
    private(set) var entries: [JobID: Entry] = [:]
    private var nextJob: JobID = 1

    package init(settings: Settings = Settings()) {
        self.settings = settings
    }

    /// Pushes being sent now.
    package var inFlight: Int {
        entries.values.count { if case .sending = $0.phase { true } else { false } }
    }

    /// Pushes waiting for a slot or a retry.
    package var waiting: Int { entries.count - inFlight }

    /// When the earliest retry is due, if one is waiting.
    package var nextWake: Int64? {
        entries.values.compactMap { if case .backingOff(let until) = $0.phase { until } else { nil } }.min()
    }

    package mutating func handle(_ event: Event) -> [Action] {
        var actions: [Action] = []
        let now: Int64
        switch event {
        case .deliver(let job, let at):
            now = at
            if waiting >= settings.maxWaiting {
                actions.append(.count(job.device.platform, .overflow))
            } else {
                entries[nextJob] = Entry(job: job, attempts: 0, phase: .queued)
                nextJob += 1
            }
        case .cancel(let callId, let userId, let at):
            now = at
            for id in entries.keys.sorted() {
                guard let entry = entries[id], entry.job.call.callId == callId, entry.job.userId == userId else {
                    continue
                }
                if case .sending = entry.phase {
                    entries[id]?.phase = .sending(cancelled: true)
                } else {
                    entries[id] = nil
                    actions.append(.count(entry.job.device.platform, .withdrawn))
                }
            }
        case .finished(let id, let outcome, let at):
            now = at
            actions += finished(id, outcome, now: now)
        case .tick(let at):
            now = at
        }
        return actions + startReady(now: now)
    }

    private mutating func finished(_ id: JobID, _ outcome: PushOutcome, now: Int64) -> [Action] {
        guard let entry = entries.removeValue(forKey: id) else { return [] }
        let platform = entry.job.device.platform
        switch outcome {
        case .delivered:
            return [.count(platform, .delivered)]
        case .unregistered:
            return [
                .count(platform, .unregistered),
                .removeDevice(
                    userId: entry.job.userId, deviceId: entry.job.device.deviceId, token: entry.job.device.token),
            ]
        case .failed:
            return [.count(platform, .failed)]
        case .credentialRefused:
            return [.count(platform, .credentialRefused)]
        case .retry(_, let afterMillis):
            let cancelled = entry.phase == .sending(cancelled: true)
            let exponential = settings.backoffBaseMillis << Int64(min(entry.attempts - 1, 20))
            let delay = max(afterMillis ?? 0, min(settings.backoffMaxMillis, exponential))
            guard !cancelled, entry.attempts < settings.maxAttempts, now + delay < entry.job.call.ringDeadline else {
                return [.count(platform, cancelled ? .withdrawn : .failed)]
            }
            entries[id] = Entry(job: entry.job, attempts: entry.attempts, phase: .backingOff(until: now + delay))
            return [.count(platform, .retried)]
        }
    }

    /// Starts queued pushes and due retries, oldest first, while slots are free; drops those past their deadline.
    private mutating func startReady(now: Int64) -> [Action] {
        var actions: [Action] = []
        var running = inFlight
        for id in entries.keys.sorted() {
            guard let entry = entries[id] else { continue }
            let ready: Bool =
                switch entry.phase {
                case .queued: true
                case .backingOff(let until): until <= now
                case .sending: false
                }
            guard ready else { continue }
            if now >= entry.job.call.ringDeadline {
                entries[id] = nil
                actions.append(.count(entry.job.device.platform, .expired))
                continue
            }
            guard running < settings.maxInFlight else { continue }
            running += 1
            entries[id]?.attempts += 1
            entries[id]?.phase = .sending(cancelled: false)
            actions.append(.send(id, entry.job, attempt: entry.attempts + 1))
        }
        return actions
    }
}
