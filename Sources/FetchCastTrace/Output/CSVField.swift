/// RFC 4180 quoting for values written to CSV.
public enum CSVField {
    /// The value, quoted when it holds a comma, quote or line break (quotes doubled).
    public static func escape(_ value: String) -> String {
        var needs = false
        for b in value.utf8 where b == 0x2C || b == 0x22 || b == 0x0A || b == 0x0D {
            needs = true
            break
        }
        if !needs { return value }
        var out = "\""
        for ch in value {
            if ch == "\"" { out += "\"\"" } else { out.append(ch) }
        }
        return out + "\""
    }

    /// A line of escaped values joined by commas, with a final `\n`.
    public static func line(_ values: [String]) -> String {
        values.map(escape).joined(separator: ",") + "\n"
    }

    /// Formats a real with a fixed number of decimals, deterministically (no locale).
    public static func fixed(_ value: Double, decimals: Int) -> String {
        if value.isNaN { return "" }
        if value.isInfinite { return value > 0 ? "inf" : "-inf" }
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let scaled = (abs(value) * scale).rounded()
        guard scaled < 9.0e18 else { return String(value) }
        let n = UInt64(scaled)
        let intPart = n / UInt64(scale)
        var frac = String(n % UInt64(scale))
        if frac.count < decimals { frac = String(repeating: "0", count: decimals - frac.count) + frac }
        let sign = value < 0 && n != 0 ? "-" : ""
        return decimals == 0 ? "\(sign)\(intPart)" : "\(sign)\(intPart).\(frac)"
    }
}
