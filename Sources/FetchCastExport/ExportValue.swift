import FetchCastTrace

/// One cell of an exported table.
package enum ExportValue: Sendable, Hashable {
    /// No value: an empty CSV field, JSON `null`.
    case null
    /// Text.
    case text(String)
    /// An integer.
    case integer(Int64)
    /// A real written with a fixed number of decimals (deterministic, no locale).
    case real(Double, decimals: Int)

    /// The CSV field, unescaped.
    var csv: String {
        switch self {
        case .null: return ""
        case .text(let s): return s
        case .integer(let n): return String(n)
        case .real(let x, let d): return CSVField.fixed(x, decimals: d)
        }
    }

    /// The JSON value.
    var json: String {
        switch self {
        case .null: return "null"
        case .text(let s): return JSONText.quote(s)
        case .integer(let n): return String(n)
        case .real(let x, let d): return x.isFinite ? CSVField.fixed(x, decimals: d) : "null"
        }
    }
}

/// JSON string quoting (RFC 8259), deterministic.
enum JSONText {
    static func quote(_ s: String) -> String {
        var out = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if u.value < 0x20 {
                    let hex = String(u.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(u)
                }
            }
        }
        return out + "\""
    }
}
