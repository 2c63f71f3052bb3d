import Foundation

/// The one machine-readable line a bench prints: its report as compact JSON with sorted keys.
enum BenchJSONLine {
    static func render(_ report: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(report), let text = String(data: data, encoding: .utf8) else {
            return "{\"error\":\"could not encode the report\"}"
        }
        return text
    }
}
