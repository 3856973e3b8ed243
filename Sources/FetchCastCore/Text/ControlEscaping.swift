extension String {
    /// The string with control characters written as escapes (`\n`, `\t`, `\r`, `\e`, else
    /// `\u{HH}`), and a backslash before them kept as it is: what a file name or another value
    /// from outside looks like in a message or a table, so that an ESC or a newline in it can
    /// neither drive the terminal nor forge a line. Strings without control characters are
    /// returned unchanged.
    public var escapingControlCharacters: String {
        guard unicodeScalars.contains(where: Self.isControl) else { return self }
        var out = ""
        for scalar in unicodeScalars {
            guard Self.isControl(scalar) else {
                out.unicodeScalars.append(scalar)
                continue
            }
            switch scalar {
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            case "\u{1B}": out += "\\e"
            default: out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            }
        }
        return out
    }

    /// C0 controls, DEL and C1 controls (an 8-bit CSI among them).
    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }
}
