import CallAPIServerCore
import CallAPISignalProtocol
import CallAPIWire

/// One call's page in the console: its record, both sides' marks on one clock-corrected time line with error bars,
/// the devices' clocks and stage latencies, its webhooks, and a diagnosis checklist (docs/timeline.md).
enum ConsoleCallPage {
    /// The checklist's thresholds (the anchors': Agora's Call Inspector and Twilio's call summary).
    enum Threshold {
        static let acceptToConnectedMillis: Int64 = 1_000
        static let clockErrorMillis: Int64 = 50
        static let audioFreezeMillis: Int64 = 200
        static let videoFreezeMillis: Int64 = 600
        static let lossPercent = 5.0
        static let roundTripMillis = 400.0
    }

    /// How a check came out.
    enum Verdict: Equatable {
        case ok(String)
        case bad(String)
        case notMeasured(String)
    }

    static func body(_ timeline: CallTimeline, webhooks: [StoredCallEvent]?, pushes: [PushLog.Attempt]) -> String {
        var html = ""
        if let record = timeline.record {
            let ender = record.endedBy.map { "ended by \(ConsoleHTML.escaped($0)): " } ?? ""
            html +=
                "<p><b>\(ConsoleHTML.escaped(record.caller)) → \(ConsoleHTML.escaped(record.callee))</b>, "
                + "\(record.media.rawValue), started \(ConsoleHTML.time(record.startedAt)); "
                + "<b>\(record.outcome.rawValue)</b> (\(ender)\(ConsoleHTML.escaped(record.endReason)))"
                + (record.durationMillis > 0 ? ", connected for \(ConsoleHTML.seconds(record.durationMillis))" : "")
                + "</p>"
        } else {
            html += "<p>No ledger record yet (the call is in progress, or only its reports arrived).</p>"
        }
        html += "<h2>Time line</h2>" + svg(timeline)
        html += "<h2>Diagnosis</h2><table><tr><th>check</th><th>result</th></tr>"
        for (check, verdict) in diagnosis(timeline) {
            let (style, text) =
                switch verdict {
                case .ok(let text): ("ok", "✓ " + text)
                case .bad(let text): ("bad", "✗ " + text)
                case .notMeasured(let text): ("na", "– " + text)
                }
            html +=
                "<tr><td>\(ConsoleHTML.escaped(check))</td><td class=\"\(style)\">\(ConsoleHTML.escaped(text))</td></tr>"
        }
        html +=
            "</table><h2>Clocks</h2><table><tr><th>lane</th><th>offset to the server</th><th>error</th>"
            + "<th>samples</th></tr>"
        for lane in timeline.lanes {
            guard let clock = lane.clock else {
                html += "<tr><td>\(ConsoleHTML.escaped(lane.name))</td><td colspan=\"3\">the server's clock</td></tr>"
                continue
            }
            html +=
                "<tr><td>\(ConsoleHTML.escaped(lane.name))</td><td>\(clock.offsetMillis) ms</td>"
                + "<td>± \(clock.errorMillis) ms</td><td>\(clock.samples)</td></tr>"
        }
        html += "</table><h2>Stages</h2><table><tr><th>lane</th><th>stage</th><th>took</th></tr>"
        for stage in timeline.stages {
            html +=
                "<tr><td>\(ConsoleHTML.escaped(stage.lane))</td><td>\(stage.stage.rawValue)</td>"
                + "<td>\(stage.millis) ms</td></tr>"
        }
        html += "</table><h2>Quality</h2>" + qualityTable(timeline)
        html += "<h2>Marks</h2><table><tr><th>at</th><th>lane</th><th>mark</th><th>detail</th><th>±</th></tr>"
        let start = timeline.entries.first?.at ?? 0
        for entry in timeline.entries {
            html +=
                "<tr><td>+\(ConsoleHTML.seconds(entry.at - start))</td><td>\(ConsoleHTML.escaped(entry.lane))</td>"
                + "<td><code>\(ConsoleHTML.escaped(entry.name))</code></td>"
                + "<td>\(ConsoleHTML.escaped(entry.detail ?? ""))</td>"
                + "<td>\(entry.errorMillis > 0 ? "\(entry.errorMillis) ms" : "")</td></tr>"
        }
        html += "</table><h2>Webhooks</h2>"
        if let webhooks {
            html += "<table><tr><th>seq</th><th>event</th><th>emitted</th><th>delivery</th></tr>"
            for event in webhooks {
                let delivery =
                    event.deliveredAt.map { "delivered \(ConsoleHTML.time($0))" }
                    ?? "pending (\(event.attempts) failed attempts)"
                html +=
                    "<tr><td>\(event.seq)</td><td>\(event.kind.rawValue)</td>"
                    + "<td>\(ConsoleHTML.time(event.createdAt))</td><td>\(delivery)</td></tr>"
            }
            html += "</table>"
        } else {
            html += "<p class=\"na\">Call webhooks are off on this server (--call-webhook-url).</p>"
        }
        html += "<h2>Pushes</h2>"
        if pushes.isEmpty {
            html +=
                "<p class=\"na\">No push for this call on this node (in memory: the latest \(PushLog.capacity) attempts).</p>"
        } else {
            html +=
                "<table><tr><th>at</th><th>user</th><th>device</th><th>service</th><th>attempt</th><th>outcome</th></tr>"
            for push in pushes {
                html +=
                    "<tr><td>\(ConsoleHTML.time(push.at))</td><td>\(ConsoleHTML.escaped(push.userId))</td>"
                    + "<td>\(ConsoleHTML.escaped(push.deviceId))</td><td>\(push.platform.rawValue)</td>"
                    + "<td>\(push.attempt)</td><td>\(ConsoleHTML.escaped(Self.text(push.outcome)))</td></tr>"
            }
            html += "</table>"
        }
        return html
    }

    /// A provider's answer in words.
    static func text(_ outcome: PushOutcome) -> String {
        switch outcome {
        case .delivered: "delivered"
        case .unregistered(let reason): "unregistered: \(reason) (the device was removed)"
        case .retry(let reason, _): "to retry: \(reason)"
        case .failed(let reason): "failed: \(reason)"
        case .credentialRefused(let reason): "credential refused: \(reason)"
        }
    }

    /// The checklist: what the record and the reports tell, and the quality checks over the devices' samples.
    static func diagnosis(_ timeline: CallTimeline) -> [(String, Verdict)] {
        var checks: [(String, Verdict)] = []
        if let record = timeline.record {
            checks.append(
                (
                    "The call connected",
                    record.connectedAt != nil
                        ? .ok("connected") : .bad("\(record.outcome.rawValue): \(record.endReason)")
                ))
        } else {
            checks.append(("The call connected", .notMeasured("no ledger record yet")))
        }
        let reporters = Set(timeline.lanes.compactMap(\.userId))
        checks.append(
            (
                "Both sides reported",
                reporters.count >= 2
                    ? .ok("\(reporters.sorted().joined(separator: " and "))")
                    : .bad(reporters.isEmpty ? "no reports" : "only \(reporters.sorted().joined()) reported")
            ))
        let clocks = timeline.lanes.compactMap(\.clock)
        if clocks.isEmpty {
            checks.append(("Clocks known within \(Threshold.clockErrorMillis) ms", .notMeasured("no reports")))
        } else {
            let worst = clocks.map(\.errorMillis).max() ?? 0
            checks.append(
                (
                    "Clocks known within \(Threshold.clockErrorMillis) ms",
                    worst <= Threshold.clockErrorMillis ? .ok("worst ± \(worst) ms") : .bad("± \(worst) ms")
                ))
        }
        let accepts = timeline.stages.filter { $0.stage == .acceptToConnected }
        if accepts.isEmpty {
            checks.append(
                (
                    "Accept → connected within \(Threshold.acceptToConnectedMillis) ms",
                    .notMeasured("no device saw both")
                ))
        } else {
            let slow = accepts.filter { $0.millis > Threshold.acceptToConnectedMillis }
            checks.append(
                (
                    "Accept → connected within \(Threshold.acceptToConnectedMillis) ms",
                    slow.isEmpty
                        ? .ok("longest \(accepts.map(\.millis).max() ?? 0) ms")
                        : .bad(slow.map { "\($0.lane) \($0.millis) ms" }.joined(separator: ", "))
                ))
        }
        checks += qualityChecks(timeline.quality)
        return checks
    }

    /// The anchors' quality checks over every sample of the call: the worst value against its threshold, naming the
    /// device that saw it; unmeasured when no sample has the figure (an engine that reports no quality).
    static func qualityChecks(_ samples: [CallTimeline.QualityEntry]) -> [(String, Verdict)] {
        func check<Value: Comparable>(
            _ name: String, _ limit: Value, _ unit: String, _ value: (RTCQuality) -> Value?, _ text: (Value) -> String
        ) -> (String, Verdict) {
            let measured = samples.compactMap { entry in value(entry.quality).map { (entry.lane, $0) } }
            guard let worst = measured.max(by: { $0.1 < $1.1 }) else {
                return (name, .notMeasured("not measured: the engines sent no quality samples"))
            }
            return worst.1 <= limit
                ? (name, .ok("worst \(text(worst.1))\(unit) (\(measured.count) samples)"))
                : (name, .bad("\(text(worst.1))\(unit) at \(worst.0)"))
        }
        let percent: (Double) -> String = { String(format: "%.1f", $0) }
        let millis: (Double) -> String = { String(format: "%.0f", $0) }
        return [
            check(
                "Audio freezes under \(Threshold.audioFreezeMillis) ms", Threshold.audioFreezeMillis, " ms",
                \.audioFreezeMillis, { "\($0)" }),
            check(
                "Video freezes under \(Threshold.videoFreezeMillis) ms", Threshold.videoFreezeMillis, " ms",
                \.videoFreezeMillis, { "\($0)" }),
            check(
                "Packet loss under \(Int(Threshold.lossPercent)) %", Threshold.lossPercent, " %",
                { [$0.audioLossPercent, $0.videoLossPercent].compactMap { $0 }.max() }, percent),
            check(
                "RTT under \(Int(Threshold.roundTripMillis)) ms", Threshold.roundTripMillis, " ms", \.roundTripMillis,
                millis),
        ]
    }

    /// Each device's quality samples: one row per period.
    static func qualityTable(_ timeline: CallTimeline) -> String {
        guard !timeline.quality.isEmpty else {
            return "<p class=\"na\">No quality samples: the devices' engines report none.</p>"
        }
        let start = timeline.entries.first?.at ?? timeline.quality.first?.at ?? 0
        func number(_ value: Double?, _ format: String) -> String { value.map { String(format: format, $0) } ?? "–" }
        var html = qualityChart(timeline.quality)
        html +=
            "<table><tr><th>at</th><th>lane</th><th>from</th><th>loss audio / video</th><th>jitter</th><th>RTT</th>"
            + "<th>kbit/s audio / video</th><th>longest gap audio / video</th></tr>"
        for entry in timeline.quality {
            let q = entry.quality
            html +=
                "<tr><td>+\(ConsoleHTML.seconds(entry.at - start))</td><td>\(ConsoleHTML.escaped(entry.lane))</td>"
                + "<td>\(entry.peer)</td><td>\(number(q.audioLossPercent, "%.1f")) / \(number(q.videoLossPercent, "%.1f")) %</td>"
                + "<td>\(number(q.jitterMillis, "%.1f")) ms</td><td>\(number(q.roundTripMillis, "%.0f")) ms</td>"
                + "<td>\(number(q.audioKbps, "%.0f")) / \(number(q.videoKbps, "%.0f"))</td>"
                + "<td>\(q.audioFreezeMillis.map(String.init) ?? "–") / \(q.videoFreezeMillis.map(String.init) ?? "–") ms</td></tr>"
        }
        return html + "</table>"
    }

    /// The bitrates received over the call, one chart per direction (each lane measures what its device received):
    /// video in blue, audio in green, a red tick for each period that lost packets.
    static func qualityChart(_ samples: [CallTimeline.QualityEntry]) -> String {
        let (width, height, left) = (720.0, 90.0, 170.0)
        guard let first = samples.map(\.at).min(), let last = samples.map(\.at).max() else { return "" }
        let span = Double(max(1, last - first))
        let top = max(1, samples.map { max($0.quality.videoKbps, $0.quality.audioKbps) }.max() ?? 1)
        var lanes: [String] = []
        for entry in samples where !lanes.contains(entry.lane) { lanes.append(entry.lane) }
        var svg = ""
        for lane in lanes {
            let points = samples.filter { $0.lane == lane }
            func x(_ at: Int64) -> String { String(format: "%.1f", left + Double(at - first) / span * width) }
            func y(_ kbps: Double) -> String { String(format: "%.1f", height - 4 - kbps / top * (height - 20)) }
            func line(_ kbps: (RTCQuality) -> Double, _ colour: String) -> String {
                let path = points.map { "\(x($0.at)),\(y(kbps($0.quality)))" }.joined(separator: " ")
                return "<polyline points=\"\(path)\" fill=\"none\" stroke=\"\(colour)\" stroke-width=\"2\"/>"
            }
            let losses = points.filter { max($0.quality.audioLossPercent ?? 0, $0.quality.videoLossPercent ?? 0) > 0 }
                .map {
                    "<line x1=\"\(x($0.at))\" y1=\"\(height - 14)\" x2=\"\(x($0.at))\" y2=\"\(height)\" stroke=\"#c62828\"/>"
                }
            svg +=
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(left + width + 20))\" height=\"\(Int(height))\" "
                + "font-size=\"11\"><text x=\"4\" y=\"16\">\(ConsoleHTML.escaped(lane)) received</text>"
                + "<text x=\"4\" y=\"32\" fill=\"#666\">top \(Int(top)) kbit/s</text>"
                + line(\.videoKbps, "#1565c0") + line(\.audioKbps, "#2e7d32") + losses.joined() + "</svg>"
        }
        return svg
    }

    /// The marks as an SVG: a row per lane, each mark a dot with its error bar, on one axis from the first mark.
    static func svg(_ timeline: CallTimeline) -> String {
        let (labelWidth, plotWidth, rowHeight) = (170.0, 720.0, 30.0)
        guard !timeline.entries.isEmpty else { return "<p class=\"na\">No marks.</p>" }
        let low = timeline.entries.map { $0.at - $0.errorMillis }.min() ?? 0
        let high = timeline.entries.map { $0.at + $0.errorMillis }.max() ?? 0
        let span = Double(max(1, high - low))
        func x(_ at: Int64) -> String { String(format: "%.1f", labelWidth + Double(at - low) / span * plotWidth) }
        let rows = Dictionary(uniqueKeysWithValues: timeline.lanes.enumerated().map { ($1.name, $0) })
        let height = Double(timeline.lanes.count) * rowHeight + 24
        var svg =
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(labelWidth + plotWidth + 20))\" "
            + "height=\"\(Int(height))\" font-size=\"11\">"
        for (index, lane) in timeline.lanes.enumerated() {
            let y = Double(index) * rowHeight + rowHeight / 2
            svg +=
                "<text x=\"4\" y=\"\(y + 4)\">\(ConsoleHTML.escaped(lane.name))</text>"
                + "<line x1=\"\(labelWidth)\" y1=\"\(y)\" x2=\"\(labelWidth + plotWidth)\" y2=\"\(y)\" stroke=\"#ddd\"/>"
        }
        for tick in 0...4 {
            let at = low + Int64(Double(high - low) * Double(tick) / 4)
            svg +=
                "<text x=\"\(x(at))\" y=\"\(height - 6)\" text-anchor=\"middle\" fill=\"#666\">"
                + "+\(ConsoleHTML.seconds(at - low))</text>"
        }
        for entry in timeline.entries {
            let y = Double(rows[entry.lane] ?? 0) * rowHeight + rowHeight / 2
            let colour = entry.lane == "server" ? "#444" : (entry.name.hasPrefix("error.") ? "#c62828" : "#1565c0")
            if entry.errorMillis > 0 {
                svg +=
                    "<line x1=\"\(x(entry.at - entry.errorMillis))\" y1=\"\(y)\" "
                    + "x2=\"\(x(entry.at + entry.errorMillis))\" y2=\"\(y)\" stroke=\"\(colour)\" stroke-width=\"3\" "
                    + "opacity=\"0.35\"/>"
            }
            let detail = entry.detail.map { " (\($0))" } ?? ""
            svg +=
                "<circle cx=\"\(x(entry.at))\" cy=\"\(y)\" r=\"3.5\" fill=\"\(colour)\"><title>"
                + ConsoleHTML.escaped(
                    "\(entry.name)\(detail) +\(ConsoleHTML.seconds(entry.at - low)) ± \(entry.errorMillis) ms")
                + "</title></circle>"
        }
        return svg + "</svg>"
    }
}
