import FetchCastTrace

/// Writes an exported table row by row: RFC 4180 CSV with a header, or JSON Lines whose
/// objects carry `schema` (``schemaVersion``) and then one key per column, in column order.
package struct ExportWriter<Out: TextOutputStream> {
    /// The version in every JSON record's `schema` key.
    package static var schemaVersion: Int { 1 }

    /// The column names.
    package let columns: [String]
    /// CSV or JSON Lines.
    package let format: ExportFormat
    /// Rows written so far.
    package private(set) var rows = 0
    private var started = false
    private let keys: [String]

    /// Creates a writer; nothing is written until the first row (or ``finish(to:)``).
    package init(columns: [String], format: ExportFormat) {
        self.columns = columns
        self.format = format
        keys = columns.map { JSONText.quote($0) + ":" }
    }

    /// Writes one row; `values` must have one value per column.
    package mutating func write(_ values: [ExportValue], to out: inout Out) {
        precondition(values.count == columns.count, "an export row needs one value per column")
        startIfNeeded(&out)
        switch format {
        case .csv:
            out.write(values.map { CSVField.escape($0.csv) }.joined(separator: ",") + "\n")
        case .json:
            var line = "{\"schema\":\(Self.schemaVersion)"
            for (key, value) in zip(keys, values) {
                line += "," + key + value.json
            }
            out.write(line + "}\n")
        }
        rows += 1
    }

    /// Writes the CSV header when no row was written (an empty table still has its header).
    package mutating func finish(to out: inout Out) {
        startIfNeeded(&out)
    }

    private mutating func startIfNeeded(_ out: inout Out) {
        guard !started else { return }
        started = true
        if format == .csv {
            out.write(columns.map(CSVField.escape).joined(separator: ",") + "\n")
        }
    }
}
