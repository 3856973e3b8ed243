import FetchCastCore
import FetchCastModel
import FetchCastTrace

/// `run.json`: what produced a result (tool and semantics versions, every parameter, the energy
/// profile, each input's SHA-256). Deterministic: no clock, no thread count.
struct RunManifest: Codable, Sendable {
    struct Parameters: Codable, Sendable {
        var policies: [String]
        var budgets: [Double]
        var tauSeconds: Double
        var topApps: Int
        var devices: [String]?
        var from: String?
        var to: String?
        var detail: Bool
        var defaultUTCOffsetSeconds: Int32
        var priorFrom: [String]?
        var priorSHA256: [String]?
        var priorDevices: [String]?
        var priorPooledDevices: Int?
        var replanSeconds: Double
        var replanOnEvent: Bool
        var visibility: String
        /// Rule 7's inputs, only when device conditions are involved (else absent, as in v1).
        var constraints: [String: AppConstraints]?
        var system: String?

        enum CodingKeys: String, CodingKey {
            case policies, budgets, devices, from, to, detail, constraints, system
            case priorFrom = "prior_from"
            case priorSHA256 = "prior_sha256"
            case priorDevices = "prior_devices"
            case priorPooledDevices = "prior_pooled_devices"
            case tauSeconds = "tau_s"
            case topApps = "top_apps"
            case defaultUTCOffsetSeconds = "default_utc_offset_s"
            case replanSeconds = "replan_s"
            case replanOnEvent = "replan_on_event"
            case visibility
        }
    }

    /// Semantics d1's parameters, only when pushes go through a push service (else absent).
    struct Delivery: Codable, Sendable {
        var semantics = "d1"
        var service: String
        var policies: [String]
        var pushesPerHour: Double
        var burst: Int
        /// When `planned` sends: `send_at` (``PushTiming``) or `fetch_at`.
        var plannedSends: String
        var ttlSeconds: Double
        var keepAliveSeconds: Double
        var dozeAfterSeconds: Double?

        enum CodingKeys: String, CodingKey {
            case semantics, service, policies, burst
            case pushesPerHour = "pushes_per_hour"
            case ttlSeconds = "ttl_s"
            case keepAliveSeconds = "keep_alive_s"
            case dozeAfterSeconds = "doze_after_s"
            case plannedSends = "planned_sends"
        }
    }

    var schema = 1
    var tool = "fetchcast"
    var version: String
    var semantics: String
    var parameters: Parameters
    var energy: EnergyProfile
    /// The Wi-Fi profile, only when device conditions are involved.
    var wifiEnergy: EnergyProfile?
    var delivery: Delivery?
    var inputs: [InputDigest]
    var devices: Int
    var eventsReplayed: Int64
    var notes: [String]

    enum CodingKeys: String, CodingKey {
        case schema, tool, version, semantics, parameters, energy, inputs, devices, notes, delivery
        case wifiEnergy = "wifi_energy"
        case eventsReplayed = "events_replayed"
    }

    init(_ e: Evaluation, options: EvaluationOptions, toolVersion: String) {
        func iso(_ t: Double?) -> String? {
            t.map { Timestamp.format(micros: Int64(($0 * 1_000_000).rounded()), utcOffsetSeconds: 0) }
        }
        version = toolVersion
        // v2 (rule 7) only when conditions played a part: a v1 run's manifest is unchanged.
        semantics = e.usesConditions ? "v2" : Evaluator.semanticsVersion
        parameters = Parameters(
            policies: options.policies, budgets: options.budgets, tauSeconds: options.tau, topApps: options.topApps,
            devices: options.devices.map(Array.init),
            from: iso(options.from), to: iso(options.to), detail: options.detail,
            defaultUTCOffsetSeconds: options.trace.defaultUTCOffsetSeconds,
            priorFrom: options.prior?.traces,
            priorSHA256: options.prior?.sha256,
            priorDevices: options.prior?.devices.map(Array.init),
            priorPooledDevices: options.prior?.pooledDevices,
            replanSeconds: options.planning.replan, replanOnEvent: options.planning.replanOnEvent,
            visibility: options.planning.visibility.rawValue)
        energy = options.energy
        if e.usesConditions {
            parameters.constraints = options.constraints.apps
            parameters.system = options.constraints.system.rawValue
            wifiEnergy = options.wifiEnergy
        }
        if options.delivery.isPush {
            let d = options.delivery
            delivery = Delivery(
                service: d.kind.rawValue, policies: e.pushedPolicies, pushesPerHour: d.perHour, burst: d.burst,
                plannedSends: options.planning.sendsAtSendAt ? "send_at" : "fetch_at", ttlSeconds: d.ttl,
                keepAliveSeconds: d.keepAlive, dozeAfterSeconds: d.kind == .fcm ? d.dozeAfter : nil)
        }
        inputs = e.inputs
        devices = e.summary.first?.metrics.devices ?? 0
        eventsReplayed = e.eventsReplayed
        notes = e.notes
    }
}
