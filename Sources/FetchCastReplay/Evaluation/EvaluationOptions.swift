import FetchCastCore
import FetchCastModel
import FetchCastTrace
import Foundation

/// Everything that decides an evaluation's numbers (all of it is recorded in `run.json`).
public struct EvaluationOptions: Sendable {
    /// Policy names, in output order (see ``PolicyRegistry``).
    public var policies: [String]
    /// Daily fetch budgets B per device; every policy but `none` runs once per budget.
    public var budgets: [Double]
    /// The freshness window τ, in seconds.
    public var tau: Double
    /// K, the number of fetch-enabled apps per device.
    public var topApps: Int
    /// The radio energy model.
    public var energy: EnergyProfile
    /// Replay only these device ids (`nil`: every device).
    public var devices: DeviceIDs?
    /// Replay only events at or after this instant (Unix seconds).
    public var from: Double?
    /// Replay only events strictly before this instant (Unix seconds).
    public var to: Double?
    /// Record one row per scored launch, per fetch and per fetch the learned policy weighed
    /// (`launches.csv.gz`, `fetches.csv.gz`, `decisions.csv.gz`).
    public var detail: Bool
    /// Worker threads for pass 2 (results do not depend on it).
    public var threads: Int
    /// How trace files are parsed.
    public var trace: TraceOptions
    /// Where the spool and detail scratch files go (`nil`: `$TMPDIR` or `/tmp`).
    public var temporaryDirectory: String?
    /// Where the population prior of `learned` and `planned` came from (`nil`: the generic prior).
    public var prior: PriorSource?
    /// How `planned` asks for plans.
    public var planning = PlanningOptions()
    /// Per-app fetch constraints and the system's rules, enforced at every fetch of every
    /// policy (rule 7 of docs/evaluation.md); none by default.
    public var constraints = FetchConstraints.none
    /// The profile of fetches made on Wi-Fi (``energy`` prices cellular and unknown networks).
    public var wifiEnergy = EnergyProfile.wifi
    /// How the fetches of push policies (`interval`, `hourly`, `planned`) reach the device:
    /// `direct` (v1, the default) or through a push service (semantics d1).
    public var delivery = DeliveryOptions()

    /// The traces and devices a population prior was learned from, for `run.json`.
    public struct PriorSource: Sendable, Hashable {
        public var traces: [String]
        /// SHA-256 of each trace's bytes, in the same order.
        public var sha256: [String]
        public var devices: DeviceIDs?
        public var pooledDevices: Int

        /// Creates a description.
        public init(traces: [String], sha256: [String], devices: DeviceIDs?, pooledDevices: Int) {
            self.traces = traces
            self.sha256 = sha256
            self.devices = devices
            self.pooledDevices = pooledDevices
        }
    }

    /// Creates options; the defaults are the issue's (`none,interval,oracle,hourly,learned`,
    /// budgets 12 and 24, τ = 30 min, 5 apps, LTE).
    public init(
        policies: [String] = ["none", "interval", "oracle", "hourly", "learned"], budgets: [Double] = [12, 24],
        tau: Double = 1800, topApps: Int = 5, energy: EnergyProfile = .lte, devices: DeviceIDs? = nil,
        from: Double? = nil, to: Double? = nil, detail: Bool = false, threads: Int = 0,
        trace: TraceOptions = TraceOptions(), temporaryDirectory: String? = nil
    ) {
        self.policies = policies
        self.budgets = budgets
        self.tau = tau
        self.topApps = topApps
        self.energy = energy
        self.devices = devices
        self.from = from
        self.to = to
        self.detail = detail
        self.threads = threads
        self.trace = trace
        self.temporaryDirectory = temporaryDirectory
    }

    /// Parses a duration: `30m`, `1800`, `1800s`, `2h`, `1.5h`, `1d`. Returns seconds.
    public static func parseDuration(_ text: String) -> Double? {
        var t = Substring(text)
        var unit = 1.0
        switch t.last {
        case "s": unit = 1; t = t.dropLast()
        case "m": unit = 60; t = t.dropLast()
        case "h": unit = 3600; t = t.dropLast()
        case "d": unit = 86_400; t = t.dropLast()
        default: break
        }
        guard let v = Double(t), v.isFinite, v > 0 else { return nil }
        return v * unit
    }
}

extension EvaluationOptions {
    /// Reads a `--devices` file: one device id per line (UTF-8); blank lines and lines starting
    /// with `#` are ignored, surrounding spaces trimmed. Ids are kept byte for byte
    /// (``DeviceIDs``): two lines that differ only in their Unicode normalisation name two devices.
    /// - Throws: ``EvaluationError/deviceList(path:reason:)`` when it cannot be read, a line is
    ///   not UTF-8, or it lists nothing.
    public static func loadDeviceList(_ path: String) throws(EvaluationError) -> DeviceIDs {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw .deviceList(path: path, reason: "cannot read the device list (check the path)")
        }
        var ids = DeviceIDs()
        for (number, bytes) in data.split(separator: 0x0A, omittingEmptySubsequences: false).enumerated() {
            let line = bytes.last == 0x0D ? bytes.dropLast() : bytes
            guard let text = String(validating: line, as: UTF8.self) else {
                throw .deviceList(path: path, reason: "line \(number + 1) is not valid UTF-8 (save the list as UTF-8, one device id per line)")
            }
            let id = text.trimmingCharacters(in: .whitespaces)
            if id.isEmpty || id.hasPrefix("#") { continue }
            ids.insert(id)
        }
        guard !ids.isEmpty else { throw .deviceList(path: path, reason: "the device list is empty (expected one device id per line)") }
        return ids
    }
}
