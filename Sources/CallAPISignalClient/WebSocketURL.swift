/// Turns what a user typed as a server address into the WebSocket URL of one of its endpoints.
enum WebSocketURL {
    /// `url` with `path` added when it has none, `http(s)` turned into `ws(s)`, and `ws://` when there is no
    /// scheme.
    static func make(from url: String, defaultPath path: String) -> String {
        var result = url
        if result.hasPrefix("http://") { result = "ws://" + result.dropFirst("http://".count) }
        if result.hasPrefix("https://") { result = "wss://" + result.dropFirst("https://".count) }
        if !result.contains("://") { result = "ws://" + result }
        let afterScheme = result[result.range(of: "://")!.upperBound...]
        if !afterScheme.contains("/") || afterScheme.hasSuffix("/") && afterScheme.filter({ $0 == "/" }).count == 1 {
            if result.hasSuffix("/") { result.removeLast() }
            result += path
        }
        return result
    }
}
