/// A markdown table, with columns padded so it also reads well in a terminal.
struct MarkdownTable {
    var headers: [String]
    var rows: [[String]] = []

    init(_ headers: [String]) { self.headers = headers }

    mutating func add(_ row: [String]) { rows.append(row) }

    func render() -> String {
        var widths = headers.map(\.count)
        for row in rows {
            for (index, cell) in row.enumerated() where index < widths.count {
                widths[index] = max(widths[index], cell.count)
            }
        }
        func line(_ cells: [String]) -> String {
            let padded = cells.enumerated().map { index, cell in
                cell + String(repeating: " ", count: max(0, widths[index] - cell.count))
            }
            return "| " + padded.joined(separator: " | ") + " |"
        }
        let rule = "|" + widths.map { String(repeating: "-", count: $0 + 2) }.joined(separator: "|") + "|"
        return ([line(headers), rule] + rows.map(line)).joined(separator: "\n")
    }

    /// A number with a fixed count of decimals, for cells.
    static func format(_ value: Double, decimals: Int = 1) -> String {
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let rounded = (value * scale).rounded() / scale
        if decimals == 0 { return String(Int(rounded)) }
        var text = String(rounded)
        if let dot = text.firstIndex(of: ".") {
            let have = text.distance(from: dot, to: text.endIndex) - 1
            if have < decimals { text += String(repeating: "0", count: decimals - have) }
        }
        return text
    }
}
