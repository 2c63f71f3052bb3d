import Foundation

/// The console's pages as HTML text: one layout, escaping, and times. No script: each page is whole as served, and
/// a page that shows something live reloads itself.
enum ConsoleHTML {
    /// `text` safe inside an element or a quoted attribute.
    static func escaped(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }

    /// `text` as one component of a URL path or query.
    static func component(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~")))
            ?? ""
    }

    /// A whole page: `title`, `body` (HTML), reloaded every `refreshSeconds` when given.
    static func page(title: String, body: String, refreshSeconds: Int? = nil, loggedIn: Bool = true) -> String {
        let refresh = refreshSeconds.map { "<meta http-equiv=\"refresh\" content=\"\($0)\">" } ?? ""
        let logout =
            loggedIn
            ? "<form method=\"post\" action=\"/console/logout\" class=\"logout\"><button>Log out</button></form>" : ""
        return """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><title>\(escaped(title)) · callapi console</title>\(refresh)
            <style>
            body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}
            table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{padding:.2em .7em;border-bottom:1px solid #ddd;text-align:left}
            th{background:#f4f4f4}.ok{color:#1a7f37}.bad{color:#c62828}.na{color:#888}code{font-size:13px}
            .logout{float:right}h1 a{color:inherit;text-decoration:none}
            </style></head><body>
            \(logout)<h1><a href="/console">callapi console</a> · \(escaped(title))</h1>
            \(body)
            </body></html>
            """
    }

    /// `millis` (server clock) as `2026-11-29 23:06:17.123 UTC`.
    static func time(_ millis: Int64) -> String {
        let date = Date(timeIntervalSince1970: Double(millis) / 1000)
        let seconds = Int64((date.timeIntervalSince1970).rounded(.down))
        let components = Calendar(identifier: .gregorian).dateComponents(
            in: TimeZone(identifier: "UTC")!, from: Date(timeIntervalSince1970: Double(seconds)))
        func two(_ value: Int?) -> String { String(format: "%02d", value ?? 0) }
        return "\(components.year ?? 0)-\(two(components.month))-\(two(components.day)) "
            + "\(two(components.hour)):\(two(components.minute)):\(two(components.second))."
            + String(format: "%03d", Int(millis - seconds * 1000)) + " UTC"
    }

    /// `millis` as `1.234 s`.
    static func seconds(_ millis: Int64) -> String {
        String(format: "%.3f s", Double(millis) / 1000)
    }
}
