import CallAPIServer
import CallAPIServerCore
import Foundation

/// What `callapi serve` prints once it listens: its endpoints, where its files are, and what is configured.
enum ServeBanner {
    static func text(_ configuration: SignalServerConfiguration, port: Int, algorithm: String) -> String {
        let scheme = configuration.tls == nil ? "ws" : "wss"
        let http = configuration.tls == nil ? "http" : "https"
        let base = "\(configuration.host):\(port)"
        var lines = [
            "callapi serve: listening on \(scheme)://\(base)/v1/signal",
            "  rtc     \(scheme)://\(base)/v1/rtc (channel capacity \(configuration.channels.capacity))",
            configuration.adminKey == nil
                ? "  tokens  POST /v1/tokens is off (no --admin-key), as are the other admin endpoints"
                : "  tokens  POST \(http)://\(base)/v1/tokens (\(algorithm))",
            "  health  \(http)://\(base)/healthz   metrics  /metrics",
            "  ledger  \(ledger(configuration.ledger))",
        ]
        if let data = configuration.dataDirectory, holdsFiles(data, configuration) {
            lines.append("  data    \(folder(data))")
        }
        lines.append("  push    \(push(configuration.push))")
        if let webhook = configuration.ledger.webhook { lines.append("  calls   webhooks to \(webhook.url)") }
        return lines.joined(separator: "\n") + "\n"
    }

    static func ledger(_ ledger: LedgerSettings) -> String {
        guard ledger.enabled else { return "off (--ledger 0): no call history, busy answers or call webhooks" }
        let kept = ledger.retentionDays.map { "calls kept \($0) days" } ?? "calls kept forever"
        let busy = ledger.answersBusy ? ", answers busy" : ""
        switch ledger.database {
        case .sqlite(let path): return "sqlite \(path) (\(kept)\(busy))"
        case .memory: return "in memory, gone when the server stops (\(kept)\(busy))"
        case .postgres(let url): return "\(withoutPassword(url)) (\(kept)\(busy))"
        }
    }

    /// Whether the server keeps any file in `data`: the ledger's SQLite file, or the push devices.
    static func holdsFiles(_ data: DataDirectory, _ configuration: SignalServerConfiguration) -> Bool {
        if configuration.push.devicesFile != nil { return true }
        guard configuration.ledger.enabled, case .sqlite(let path) = configuration.ledger.database else { return false }
        return path == data.file("callapi-ledger.sqlite")
    }

    static func folder(_ data: DataDirectory) -> String {
        switch data.origin {
        case .flag: "\(data.path) (--data-dir)"
        case .currentFolder:
            "\(data.path) (the current folder: a development server's default; --data-dir DIR for another)"
        case .platformDefault: "\(data.path) (the default data folder; --data-dir DIR for another)"
        }
    }

    static func push(_ push: PushConfiguration) -> String {
        if push.apns == nil && push.fcm == nil {
            return "off: no APNs key (--apns-key), no FCM account (--fcm-service-account)"
        }
        let apns = push.apns.map { "APNs on (key \($0.keyId), team \($0.teamId))" } ?? "APNs off (no --apns-key)"
        let fcm =
            push.fcm.map { "FCM on (project \($0.account.projectId))" } ?? "FCM off (no --fcm-service-account)"
        return "\(apns), \(fcm)"
    }

    /// A database URL with its password, if any, replaced by `***`.
    static func withoutPassword(_ url: String) -> String {
        guard let scheme = url.range(of: "://"), let at = url.range(of: "@", range: scheme.upperBound..<url.endIndex),
            let colon = url.range(of: ":", range: scheme.upperBound..<at.lowerBound)
        else { return url }
        return String(url[..<colon.upperBound]) + "***" + String(url[at.lowerBound...])
    }
}
