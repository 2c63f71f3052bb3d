import CallAPIServerCore
import CallAPISignalProtocol
import Metrics
import Prometheus

/// The server's Prometheus metrics, in a registry of its own (so several servers can run in one process).
final class ServerMetrics: Sendable {
    let registry: PrometheusCollectorRegistry
    private let factory: PrometheusMetricsFactory
    private let sessions: Metrics.Gauge
    private let usersOnline: Metrics.Gauge
    private let heldMessages: Metrics.Gauge
    private let heldBytes: Metrics.Gauge
    private let queuedFrames: Metrics.Gauge
    private let queuedBytes: Metrics.Gauge
    private let relayed: Metrics.Counter
    private let relayLatency: Metrics.Timer
    private let channelsOpen: Metrics.Gauge
    private let channelMembers: Metrics.Gauge
    private let channelQueuedFrames: Metrics.Gauge
    private let channelQueuedBytes: Metrics.Gauge
    private let channelSignals: Metrics.Counter
    private let channelKicks: Metrics.Counter
    private let channelWatchdog: Metrics.Counter
    private let webhookDeliveries: Metrics.Counter
    private let webhookFailures: Metrics.Counter
    private let answersDelivered: Metrics.Counter
    private let answersQueued: Metrics.Counter
    private let ledgerLost: Metrics.Counter
    private let callWebhookDeliveries: Metrics.Counter
    private let callWebhookFailedAttempts: Metrics.Counter
    private let callWebhookRefusals: Metrics.Counter
    private let callWebhookQueue: Metrics.Gauge
    /// Stage latencies from the devices' call reports (docs/timeline.md), one histogram per stage.
    private let callStages: [CallStage: Metrics.Timer]

    init() {
        registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.durationHistogramBuckets["callapi_relay_latency_seconds"] = [
            .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2),
            .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
            .milliseconds(250), .milliseconds(1000),
        ]
        factory.durationHistogramBuckets["callapi_call_stage_seconds"] = [
            .milliseconds(50), .milliseconds(100), .milliseconds(200), .milliseconds(300), .milliseconds(500),
            .milliseconds(750), .seconds(1), .milliseconds(1500), .seconds(2), .seconds(3), .seconds(5),
            .seconds(10), .seconds(30),
        ]
        self.factory = factory
        callStages = Dictionary(
            uniqueKeysWithValues: CallStage.allCases.map { stage in
                (
                    stage,
                    Metrics.Timer(
                        label: "callapi_call_stage_seconds", dimensions: [("stage", stage.rawValue)], factory: factory)
                )
            })
        sessions = Metrics.Gauge(label: "callapi_sessions", factory: factory)
        usersOnline = Metrics.Gauge(label: "callapi_users_online", factory: factory)
        heldMessages = Metrics.Gauge(label: "callapi_held_messages", factory: factory)
        heldBytes = Metrics.Gauge(label: "callapi_held_bytes", factory: factory)
        queuedFrames = Metrics.Gauge(label: "callapi_outbox_frames", factory: factory)
        queuedBytes = Metrics.Gauge(label: "callapi_outbox_bytes", factory: factory)
        relayed = Metrics.Counter(label: "callapi_messages_relayed_total", factory: factory)
        relayLatency = Metrics.Timer(label: "callapi_relay_latency_seconds", factory: factory)
        channelsOpen = Metrics.Gauge(label: "callapi_channels_open", factory: factory)
        channelMembers = Metrics.Gauge(label: "callapi_channel_members", factory: factory)
        channelQueuedFrames = Metrics.Gauge(label: "callapi_channel_outbox_frames", factory: factory)
        channelQueuedBytes = Metrics.Gauge(label: "callapi_channel_outbox_bytes", factory: factory)
        channelSignals = Metrics.Counter(label: "callapi_channel_signals_relayed_total", factory: factory)
        channelKicks = Metrics.Counter(label: "callapi_channel_kicks_total", factory: factory)
        channelWatchdog = Metrics.Counter(label: "callapi_channel_watchdog_removals_total", factory: factory)
        webhookDeliveries = Metrics.Counter(label: "callapi_webhook_deliveries_total", factory: factory)
        webhookFailures = Metrics.Counter(label: "callapi_webhook_failures_total", factory: factory)
        channelsOpen.record(0)
        channelMembers.record(0)
        for counter in [channelSignals, channelKicks, channelWatchdog, webhookDeliveries, webhookFailures] {
            counter.increment(by: 0)
        }
        answersDelivered = Metrics.Counter(
            label: "callapi_answers_total", dimensions: [("result", "delivered"), ("reason", "")], factory: factory)
        answersQueued = Metrics.Counter(
            label: "callapi_answers_total", dimensions: [("result", "queued"), ("reason", "")], factory: factory)
        answersDelivered.increment(by: 0)
        answersQueued.increment(by: 0)
        ledgerLost = Metrics.Counter(label: "callapi_ledger_records_lost_total", factory: factory)
        ledgerLost.increment(by: 0)
        callWebhookDeliveries = Metrics.Counter(label: "callapi_call_webhook_deliveries_total", factory: factory)
        callWebhookFailedAttempts = Metrics.Counter(
            label: "callapi_call_webhook_failed_attempts_total", factory: factory)
        callWebhookRefusals = Metrics.Counter(label: "callapi_call_webhook_events_refused_total", factory: factory)
        callWebhookQueue = Metrics.Gauge(label: "callapi_call_webhook_pending_events", factory: factory)
        for counter in [callWebhookDeliveries, callWebhookFailedAttempts, callWebhookRefusals] {
            counter.increment(by: 0)
        }
        callWebhookQueue.record(0)
    }

    func update(_ gauges: HubGauges) {
        sessions.record(gauges.sessions)
        usersOnline.record(gauges.usersOnline)
        heldMessages.record(gauges.held)
        heldBytes.record(gauges.heldBytes)
        queuedFrames.record(gauges.queuedFrames)
        queuedBytes.record(gauges.queuedBytes)
    }

    /// Publishes each configured limit as `callapi_limit{name="…"}`, so dashboards can compare usage to it.
    /// A cluster node's metrics, in this registry.
    func cluster() -> ClusterMetrics { ClusterMetrics(factory: factory) }

    func publish(limits: [(name: String, value: Double)]) {
        for limit in limits {
            Metrics.Gauge(label: "callapi_limit", dimensions: [("name", limit.name)], factory: factory)
                .record(limit.value)
        }
    }

    func answer(_ answer: ServerFrame.Answer) {
        // The two outcomes of nearly every send have their counters made once, not looked up per answer.
        switch (answer.result, answer.reason) {
        case (.delivered, nil):
            answersDelivered.increment()
            return
        case (.queued, nil):
            answersQueued.increment()
            return
        default:
            break
        }
        Metrics.Counter(
            label: "callapi_answers_total",
            dimensions: [("result", answer.result.rawValue), ("reason", answer.reason?.rawValue ?? "")],
            factory: factory
        ).increment()
    }

    func error(_ code: SignalErrorCode) {
        Metrics.Counter(label: "callapi_errors_total", dimensions: [("code", code.rawValue)], factory: factory)
            .increment()
    }

    func closed(_ reason: SignalErrorCode) {
        Metrics.Counter(label: "callapi_closes_total", dimensions: [("reason", reason.rawValue)], factory: factory)
            .increment()
    }

    /// A push ended with `outcome` (`callapi_pushes_total{provider,outcome}`).
    func push(_ platform: PushDevice.Platform, _ outcome: PushMetricOutcome) {
        Metrics.Counter(
            label: "callapi_pushes_total",
            dimensions: [("provider", platform.rawValue), ("outcome", outcome.rawValue)],
            factory: factory
        ).increment()
    }

    func messageRelayed() { relayed.increment() }

    func update(_ gauges: ChannelGauges) {
        channelsOpen.record(gauges.open)
        channelMembers.record(gauges.members)
        channelQueuedFrames.record(gauges.queuedFrames)
        channelQueuedBytes.record(gauges.queuedBytes)
    }

    func channelClosed(code: UInt16) {
        Metrics.Counter(label: "callapi_channel_closes_total", dimensions: [("code", "\(code)")], factory: factory)
            .increment()
    }

    func channelSignalRelayed() { channelSignals.increment() }
    func channelKick() { channelKicks.increment() }
    func channelWatchdogRemoval() { channelWatchdog.increment() }
    func webhookDelivered() { webhookDeliveries.increment() }
    func webhookFailed() { webhookFailures.increment() }
    func ledgerRecordLost() { ledgerLost.increment() }
    func callWebhookDelivered() { callWebhookDeliveries.increment() }
    func callWebhookAttemptFailed() { callWebhookFailedAttempts.increment() }
    func callWebhookRefused() { callWebhookRefusals.increment() }
    func callWebhookPending(_ count: Int) { callWebhookQueue.record(count) }

    /// A device's report showed `stage` taking `millis`.
    func callStage(_ stage: CallStage, millis: Int64) {
        callStages[stage]?.recordMilliseconds(millis)
    }

    func relayLatency(nanoseconds: Int64) {
        relayLatency.recordNanoseconds(nanoseconds)
    }

    /// The Prometheus text exposition.
    func render() -> String {
        String(decoding: registry.emitToBuffer(), as: UTF8.self)
    }
}
