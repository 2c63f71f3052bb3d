import CallAPIServerCore
import CallAPISignalProtocol
import Logging

/// The hub's push side (a thin shell): runs ``PushDispatch`` over the providers, saves the device registry, and
/// reports rejected tokens back to the hub. Logs name users, devices and calls, never tokens or keys.
final class PushService: Sendable {
    private enum Command: Sendable {
        case action(PushAction)
        case finished(PushDispatch.JobID, PushOutcome)
        case tick
    }

    private let providers: [PushDevice.Platform: any PushProvider]
    private let store: DeviceStore?
    private let clock: any SignalServerClock
    private let metrics: ServerMetrics
    private let logger: Logger
    private let settings: PushDispatch.Settings
    /// Every attempt, for the console's page of a call.
    let log = PushLog()
    private let commands: AsyncStream<Command>.Continuation
    private let stream: AsyncStream<Command>

    init(
        providers: [PushDevice.Platform: any PushProvider], store: DeviceStore?, clock: any SignalServerClock,
        metrics: ServerMetrics, logger: Logger, settings: PushDispatch.Settings = PushDispatch.Settings()
    ) {
        self.providers = providers
        self.store = store
        self.clock = clock
        self.metrics = metrics
        self.logger = logger
        self.settings = settings
        (stream, commands) = AsyncStream.makeStream(of: Command.self)
    }

    /// Queues a hub action (called under the hub's lock; returns at once, order kept). A registry change is saved
    /// at once instead, so that a shutdown right after it cannot lose it (the file is small and changes rarely).
    func perform(_ action: PushAction) {
        if case .saveDevices(let registry) = action {
            save(registry)
        } else {
            commands.yield(.action(action))
        }
    }

    /// Ends ``run(hub:)`` once what is queued has been handled (pushes in flight are abandoned).
    func finish() {
        commands.finish()
    }

    /// Handles commands until ``finish()``; rejected devices are reported to `hub`.
    func run(hub: SignalHub) async {
        var dispatch = PushDispatch(settings: settings)
        var wake: (at: Int64, task: Task<Void, Never>)?
        await withTaskGroup(of: Void.self) { group in
            for await command in stream {
                let now = clock.nowMillis()
                let actions: [PushDispatch.Action]
                switch command {
                case .action(.deliver(let job)):
                    if providers[job.device.platform] == nil {
                        metrics.push(job.device.platform, .unconfigured)
                        logger.warning(
                            "no push provider configured",
                            metadata: ["platform": "\(job.device.platform.rawValue)", "user": "\(job.userId)"])
                        actions = []
                    } else {
                        actions = dispatch.handle(.deliver(job, now: now))
                    }
                case .action(.cancel(let callId, let userId)):
                    actions = dispatch.handle(.cancel(callId: callId, userId: userId, now: now))
                case .action(.saveDevices):
                    actions = []  // saved in `perform`
                case .finished(let id, let outcome):
                    actions = dispatch.handle(.finished(id, outcome, now: now))
                case .tick:
                    wake = nil
                    actions = dispatch.handle(.tick(now: now))
                }
                for action in actions {
                    switch action {
                    case .send(let id, let job, let attempt):
                        guard let provider = providers[job.device.platform] else { continue }
                        let (commands, logger, log, clock) = (commands, logger, log, clock)
                        group.addTask {
                            let outcome = await provider.send(job)
                            log.record(
                                PushLog.Attempt(
                                    at: clock.nowMillis(), callId: job.call.callId, userId: job.userId,
                                    deviceId: job.device.deviceId, platform: job.device.platform, attempt: attempt,
                                    outcome: outcome))
                            if outcome != .delivered {
                                logger.notice(
                                    "push not delivered",
                                    metadata: [
                                        "platform": "\(job.device.platform.rawValue)", "user": "\(job.userId)",
                                        "device": "\(job.device.deviceId)", "call": "\(job.call.callId)",
                                        "attempt": "\(attempt)", "outcome": "\(outcome)",
                                    ])
                            }
                            commands.yield(.finished(id, outcome))
                        }
                    case .removeDevice(let userId, let deviceId, let token):
                        logger.notice(
                            "device token rejected; removing the device",
                            metadata: ["user": "\(userId)", "device": "\(deviceId)"])
                        hub.handlePush(.pushRejected(userId: userId, deviceId: deviceId, token: token))
                    case .count(let platform, let outcome):
                        metrics.push(platform, outcome)
                    }
                }
                // One timer for the earliest retry.
                if let next = dispatch.nextWake, wake == nil || next < wake!.at {
                    wake?.task.cancel()
                    let commands = commands
                    let clock = clock
                    wake = (
                        next,
                        Task {
                            // On the server's clock, so that tests move time instead of waiting for it.
                            guard (try? await clock.sleep(untilMillis: next)) != nil else { return }
                            commands.yield(.tick)
                        }
                    )
                }
            }
            wake?.task.cancel()
            group.cancelAll()
        }
    }

    private func save(_ registry: DeviceRegistry) {
        guard let store else { return }
        do {
            // The hub calls this under its lock, one change at a time: saves never overlap.
            try store.save(registry)
        } catch {
            logger.error("device registry not saved", metadata: ["error": "\(error)"])
        }
    }
}
