/// Aligned plain-text tables for terminal output.
enum TextTable {
    static func write<S: TextOutputStream>(_ rows: [[String]], rightAligned: Set<Int> = [], to out: inout S) {
        guard let first = rows.first else { return }
        var widths = Array(repeating: 0, count: first.count)
        for r in rows { for (i, c) in r.enumerated() where i < widths.count { widths[i] = max(widths[i], c.count) } }
        for r in rows {
            var line = ""
            for (i, c) in r.enumerated() {
                let pad = String(repeating: " ", count: widths[i] - c.count)
                let cell = rightAligned.contains(i) ? pad + c : (i == r.count - 1 ? c : c + pad)
                line += (i == 0 ? "" : "  ") + cell
            }
            out.write(line + "\n")
        }
    }
}
