import FetchCastCore
import FetchCastTrace
import Foundation
import Hummingbird
import HummingbirdCore

/// Reads and checks query and path parameters: a bad value is a `400` naming the parameter.
struct Query {
    /// The request's query parameters, parsed once.
    private let parameters: FlatDictionary<Substring, Substring>
    let now: @Sendable () -> Double

    /// The first parameter whose name or value is not valid percent-encoded UTF-8 (the decoder
    /// would have replaced its bytes with U+FFFD and read another value than the one sent).
    private let malformed: Substring?

    init(request: Request, now: @escaping @Sendable () -> Double) {
        parameters = request.uri.queryParameters
        malformed = Self.firstMalformed(request.uri.query ?? "")
        self.now = now
    }

    /// The raw name of the first `name=value` pair of `query` that does not percent-decode to
    /// UTF-8, or `nil`.
    static func firstMalformed(_ query: String) -> Substring? {
        for pair in query.split(separator: "&") {
            for part in pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            where part.contains("%") && String(part).removingPercentEncoding == nil {
                return pair.prefix { $0 != "=" }
            }
        }
        return nil
    }

    /// The one value of `name`, or `nil`; a parameter given twice is a `400` (which one was
    /// meant is not known), and so is any parameter of the request that is not valid
    /// percent-encoded UTF-8.
    private func value(_ name: String) throws -> Substring? {
        if let malformed {
            throw APIError(.badRequest, "the query parameter '\(malformed.prefix(64))' is not valid percent-encoded UTF-8; encode its value's UTF-8 bytes as %XX")
        }
        let values = parameters[values: name[...]]
        guard values.count <= 1 else {
            throw APIError(.badRequest, "\(name) is given \(values.count) times; give it once")
        }
        return values.first
    }

    /// A text parameter (percent-decoded), checked like an id.
    func text(_ name: String) throws -> String? {
        guard let value = try value(name) else { return nil }
        return try Self.checkedID(String(value), parameter: name)
    }

    /// A time: ISO 8601 with offset, a date, Unix seconds, or `now`. A date and time without
    /// a UTC offset is a `400`, as such a row of a trace is refused.
    func time(_ name: String) throws -> Double? {
        guard let value = try value(name) else { return nil }
        if value == "now" { return now() }
        if value.count > 10, value.utf8.dropFirst(4).first == UInt8(ascii: "-"),
           !value.dropFirst(19).contains(where: { $0 == "Z" || $0 == "z" || $0 == "+" || $0 == "-" })
        {
            throw APIError(.badRequest, "\(name) '\(value.prefix(64))' has no UTC offset; add one (2013-11-20T08:00:00Z or 2013-11-20T08:00:00+01:00)")
        }
        guard let t = Timestamp.parseArgument(String(value)) else {
            throw APIError(.badRequest, "\(name) '\(value.prefix(64))' is not a time; use ISO 8601 (2013-11-20T08:00:00+01:00), a date, Unix seconds or now")
        }
        return t
    }

    /// An integer in `range` (``Limits`` has the ranges `fetchcast` checks its flags against:
    /// the same words refuse the same values).
    func integer(_ name: String, in range: OptionRange<Int>) throws -> Int? {
        guard let value = try value(name) else { return nil }
        guard let n = Int(value), range.contains(n) else {
            throw APIError(.badRequest, range.message(name: name, got: String(value)))
        }
        return n
    }

    /// One of `values` (the first is the default, named in the message).
    func choice(_ name: String, among values: [String]) throws -> String? {
        guard let value = try value(name) else { return nil }
        guard values.contains(String(value)) else {
            throw APIError(.badRequest, "\(name) '\(value.prefix(64))' is not one of \(values.joined(separator: ", ")) (default \(values[0]))")
        }
        return String(value)
    }

    /// A number in `range` (as ``integer(_:in:)``).
    func number(_ name: String, in range: OptionRange<Double>) throws -> Double? {
        guard let value = try value(name) else { return nil }
        guard let x = Double(value), x.isFinite, range.contains(x) else {
            throw APIError(.badRequest, range.message(name: name, got: String(value)))
        }
        return x
    }

    /// The percent-decoded path parameter `name`.
    static func pathID(_ name: String, context: some RequestContext) throws -> String {
        let raw = try context.parameters.require(name)
        guard let decoded = raw.removingPercentEncoding else {
            throw APIError(.badRequest, "\(name) is not valid percent-encoded UTF-8")
        }
        return try checkedID(decoded, parameter: name)
    }

    /// Ids are any UTF-8 text up to ``TraceLimits/maxIDBytes`` (the limit of ingest too)
    /// without control characters (a NUL would end the text in SQLite's C API); they go to
    /// SQLite only as bound parameters.
    static func checkedID(_ value: String, parameter: String) throws -> String {
        guard !value.isEmpty else { throw APIError(.badRequest, "\(parameter) is empty") }
        guard value.utf8.count <= TraceLimits.maxIDBytes else {
            throw APIError(.badRequest, "\(parameter) is longer than \(TraceLimits.maxIDBytes) bytes")
        }
        guard !value.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f }) else {
            throw APIError(.badRequest, "\(parameter) contains a control character (NUL, newline, tab…)")
        }
        return value
    }
}
