import FetchCastCore
/// Why a trace could not be read, with the place to look: `FILE:LINE:COLUMN`.
public struct TraceError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The path as the user gave it (`-` for standard input).
    public var file: String
    /// The 1-based line, or 0 when the problem is the file as a whole.
    public var line: Int
    /// The 1-based column (byte in the line), or 0 when not applicable.
    public var column: Int
    /// What is wrong.
    public var problem: Problem

    /// Creates an error.
    public init(file: String, line: Int, column: Int, problem: Problem) {
        self.file = file
        self.line = line
        self.column = column
        self.problem = problem
    }

    /// The kinds of problem, each with what to fix.
    public enum Problem: Sendable, Hashable {
        /// The file could not be opened or read; the reason is the system's.
        case cannotOpen(String)
        /// The file could not be created or written; the reason is the system's.
        case cannotWrite(String)
        case empty
        /// The gzip stream ended before its end marker: after `compressedBytes` raw bytes, with
        /// `completeLines` whole lines decoded (`nil` until the reader counts them).
        case truncatedGzip(compressedBytes: Int64, completeLines: Int64?)
        case corruptGzip(String)
        case notUTF8
        case lineTooLong(limit: Int)
        /// The input holds more than `limit` bytes once decompressed (``TraceOptions/maxDecodedBytes``).
        case decodedTooLarge(limit: Int64)
        /// The input holds more than `limit` rows, blank lines included (``TraceOptions/maxEvents``).
        case tooManyEvents(limit: Int64)
        /// A device or app id longer than ``TraceLimits/maxIDBytes``.
        case idTooLong(column: String, bytes: Int, limit: Int)
        case missingColumn(String)
        case unknownColumn(String)
        case duplicateColumn(String)
        /// JSON Lines: a required key is missing from the record.
        case missingKey(String)
        /// JSON Lines: a key that is not a trace column.
        case unknownKey(String)
        /// JSON Lines: a key given twice in one record.
        case duplicateKey(String)
        /// A device or app id holding a control character (U+0000–U+001F, U+007F), which would
        /// not survive storage and display unchanged.
        case controlCharacter(column: String, value: String, scalar: UInt8)
        case fieldCount(found: Int, expected: Int)
        case unterminatedQuote
        case badTime(String, expected: String)
        case badValue(column: String, value: String, expected: String)
        case emptyValue(column: String, expected: String)
        case badJSON(String)
        case outOfOrder(device: String, previous: String, current: String)
        /// A `state` row that fills none of `network`, `power`, `battery`, `low_power`.
        case stateSetsNothing
        /// Lines end in a bare CR (classic Mac OS), so rows run together.
        case carriageReturnLineEnds
        /// A JSON array (a whole-array `.json` file, or a line holding an array of records).
        case jsonArray
    }

    /// A one-line message: `FILE:LINE:COLUMN: what is wrong (what was expected)`.
    public var description: String {
        var place = file.escapingControlCharacters
        if line > 0 { place += ":\(line)" }
        if line > 0 && column > 0 { place += ":\(column)" }
        return "\(place): \(problem.message)"
    }
}

extension TraceError.Problem {
    /// What is wrong and, in parentheses, what was expected.
    public var message: String {
        switch self {
        case .cannotOpen(let reason):
            return "cannot read the file: \(reason) (check the path and permissions)"
        case .cannotWrite(let reason):
            return "cannot write the file: \(reason) (check that its directory exists and is writable, and the free space)"
        case .empty:
            return "the file is empty (expected a CSV header line such as time,device,app,event or JSON Lines)"
        case .truncatedGzip(let compressedBytes, let completeLines):
            var read = "after \(Plural.count(compressedBytes, "compressed byte"))"
            if let completeLines {
                read += completeLines > 0 ? " (the last complete line is line \(completeLines))" : " (before the first complete line)"
            }
            return "the gzip stream ends early, \(read): the file is truncated (re-copy or re-compress it)"
        case .corruptGzip(let detail):
            return "the gzip data is corrupt: \(detail) (re-copy or re-compress the file)"
        case .notUTF8:
            return "the line is not valid UTF-8 (expected UTF-8 text; re-encode the file)"
        case .lineTooLong(let limit):
            let size = limit % (1 << 20) == 0 ? "\(limit >> 20) MiB" : "\(limit) bytes"
            return "the line is longer than \(size) (expected one event per line; is this a trace file?)"
        case .decodedTooLarge(let limit):
            return "the trace is longer than \(limit) bytes once decompressed (split it into smaller traces)"
        case .tooManyEvents(let limit):
            return "the trace holds more than \(Plural.count(limit, "row")), blank lines included (split it into smaller traces)"
        case .idTooLong(let column, let bytes, let limit):
            return "the \(column) id is \(bytes) bytes long (expected at most \(limit) bytes of UTF-8, the limit of the store's ids)"
        case .missingColumn(let name):
            return "the header has no '\(name)' column (expected the columns time,device,app,event and optionally result,bytes,duration_ms,network,power,battery,low_power)"
        case .unknownColumn(let name):
            return "unknown column '\(name)' in the header (expected only time,device,app,event,result,bytes,duration_ms,network,power,battery,low_power)"
        case .duplicateColumn(let name):
            return "column '\(name)' appears twice in the header (expected each column once)"
        case .missingKey(let name):
            return "the record has no '\(name)' key (expected the keys time, device, app, event and optionally result, bytes, duration_ms, network, power, battery, low_power)"
        case .unknownKey(let name):
            return "unknown key '\(name)' in the record (expected only the keys time, device, app, event, result, bytes, duration_ms, network, power, battery, low_power)"
        case .duplicateKey(let name):
            return "key '\(name)' appears twice in the record (expected each key once)"
        case .controlCharacter(let column, let value, let scalar):
            let hex = String(scalar, radix: 16, uppercase: true)
            let code = "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
            return "the \(column) id '\(value)' holds the control character \(code) (expected an id without control characters U+0000–U+001F and U+007F, so that it is stored exactly)"
        case .fieldCount(let found, let expected):
            return "the row has \(Plural.count(found, "field")) (expected \(expected), as many as the header)"
        case .unterminatedQuote:
            return "a quoted field is never closed (expected a closing '\"'; double a quote inside a quoted field as \"\")"
        case .badTime(let what, let expected):
            return "\(what) (expected \(expected))"
        case .badValue(let column, let value, let expected):
            return "invalid \(column) '\(value)' (expected \(expected))"
        case .emptyValue(let column, let expected):
            return "the \(column) is empty (expected \(expected))"
        case .badJSON(let detail):
            return "\(detail) (expected one flat JSON object per line with keys time, device, app, event)"
        case .outOfOrder(let device, let previous, let current):
            return "events of device '\(device)' go back in time from \(previous) to \(current) (expected each device's events in time order when a file is replayed; sort the trace by time, or `fetchcast ingest` it, which takes any order, and run `fetchcast evaluate --db`)"
        case .stateSetsNothing:
            return "the state row sets none of network, power, battery, low_power (expected at least one of them on a state event, or another event)"
        case .carriageReturnLineEnds:
            return "the file ends its lines with a bare CR (classic Mac OS line ends), so its rows run together (expected LF or CRLF line ends; convert it, e.g. tr '\\r' '\\n' < FILE > FIXED.csv)"
        case .jsonArray:
            return "the line is a JSON array (JSON Lines wants one JSON object per line, not an array of them; convert it, e.g. jq -c '.[]' FILE > FIXED.jsonl)"
        }
    }
}
