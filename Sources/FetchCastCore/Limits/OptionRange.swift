/// The values a numeric option or query parameter may take, and the sentence that refuses the
/// others: one rule for the command line (`--budget`) and the HTTP service (`budget=`).
public struct OptionRange<Value: Comparable & Sendable>: Sendable {
    /// The least and the greatest value allowed.
    public let bounds: ClosedRange<Value>
    /// Why the bounds are what they are (or the unit), said after them; `nil`: nothing.
    public let reason: String?

    /// A range with, optionally, why it is what it is.
    public init(_ bounds: ClosedRange<Value>, reason: String? = nil) {
        self.bounds = bounds
        self.reason = reason
    }

    /// Whether `value` is allowed (NaN never is).
    public func contains(_ value: Value) -> Bool { bounds.contains(value) }

    /// The error sentence for a value outside the range: `name` as the user wrote it
    /// (`--budget`, `budget`), `got` the value as given.
    public func message(name: String, got: String) -> String {
        let reason = reason.map { ", \($0)" } ?? ""
        return "\(name) must be between \(Self.text(bounds.lowerBound)) and \(Self.text(bounds.upperBound))\(reason) (got \(got.prefix(64)))"
    }

    /// `value` if allowed.
    /// - Throws: ``OptionRangeError`` naming `name` and the bounds otherwise.
    public func check(_ value: Value, name: String, got: String? = nil) throws(OptionRangeError) -> Value {
        guard contains(value) else { throw OptionRangeError(message: message(name: name, got: got ?? Self.text(value))) }
        return value
    }

    /// Whole numbers without a fraction (1440, not 1440.0).
    public static func text(_ value: Value) -> String {
        if let d = value as? Double, d.isFinite, d == d.rounded(), abs(d) < 1e15 { return String(Int64(d)) }
        return "\(value)"
    }
}

/// A value outside its ``OptionRange``.
public struct OptionRangeError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The full sentence, e.g. "--count must be between 1 and 1000 (got -1)".
    public let message: String
    public var description: String { message }
}

/// The ranges of FetchCast's numeric options, shared by `fetchcast` and `fetchcast serve`
/// (docs/cli.md and docs/serve.md list them).
public enum Limits {
    /// Fetches per device per local day: at most one a minute. Larger values were meaningless
    /// and made a replay's cost grow with the budget.
    public static let budget = OptionRange(1.0...1440.0, reason: "fetches a day (at most one a minute)")
    /// Fetches listed per device by a plan.
    public static let count = OptionRange(1...1000)
    /// How far ahead a plan looks, hours: an hour to a week (looks ahead of habits stop a week
    /// after a device's last event).
    public static let horizonHours = OptionRange(1.0...168.0, reason: "hours (an hour to a week)")
    /// Apps planned or replayed per device.
    public static let topApps = OptionRange(1...1000)
    /// Worker threads (0: every core).
    public static let threads = OptionRange(0...1024)
    /// The freshness window τ, seconds: a second to a day.
    public static let tauSeconds = OptionRange(1.0...86_400.0, reason: "seconds (1s to 1d)")
    /// How long `serve` lets one read take, seconds: a tenth of a second to an hour.
    public static let requestDeadlineSeconds = OptionRange(0.1...3600.0, reason: "seconds")
    /// How long `serve` lets requests in flight finish after SIGTERM or SIGINT, seconds.
    public static let shutdownGraceSeconds = OptionRange(0.0...3600.0, reason: "seconds")
    /// Devices a page of `GET /v1/plans` plans.
    public static let planPageDevices = OptionRange(1...100_000)
    /// How often `planned` asks for a plan in a replay, seconds: from a minute (a plan a
    /// second cost ~18 minutes on the sample and tells nothing a minute does not) to a week.
    public static let replanSeconds = OptionRange(60.0...604_800.0, reason: "seconds (1m to 7d)")
    /// Pushes per hour per (device, app) the push service's token bucket refills
    /// (`evaluate --push-per-hour`): from one in ten hours to one a second.
    public static let pushesPerHour = OptionRange(0.1...3600.0, reason: "pushes an hour")
    /// The token bucket's size (`--push-burst`).
    public static let pushBurst = OptionRange(1...1000)
    /// A push's time to live, seconds (`--push-ttl`): a second to FCM's maximum of 28 days.
    public static let pushTTLSeconds = OptionRange(1.0...2_419_200.0, reason: "seconds (1s to 28d)")
    /// Seconds between keep-alives or doze maintenance windows, and of inactivity before doze
    /// (`--keep-alive`, `--doze-after`): a minute to a day.
    public static let pushIntervalSeconds = OptionRange(60.0...86_400.0, reason: "seconds (1m to 1d)")
}

extension Int {
    /// `value` rounded toward zero, clamped to `Int`'s range (NaN: 0); unlike `Int(_:)`, never
    /// traps on a value too large to convert.
    public init(saturating value: Double) {
        if value.isNaN {
            self = 0
        } else if value >= 0x1p63 {
            self = .max
        } else if value < -0x1p63 {
            self = .min
        } else {
            self = Int(value)
        }
    }
}
