/// The sums a ``PopulationPrior`` is made of — per app name, session starts and observed hours by
/// hour of week; per pair of app names, co-usage successes and trials; the same for all apps —
/// kept so that one device's share can be taken out again.
///
/// A device's *leave-one-out* prior (what the other devices do) is then these sums minus its own
/// contribution: O(that device's apps × 168 + apps²) per device instead of re-pooling every
/// other device, so the store can give each device a prior built without it.
///
/// Every contribution is rounded to a multiple of 2⁻²⁰ (about 1e-6 of a present-day session,
/// trial or hour) before it is added. While a sum stays below 2³³ (billions of present-day
/// sessions) every partial sum is then exact in `Double`: the sums do not depend on the order
/// devices are added in (nor on dictionary order), adding and removing a device restores the
/// same bits, and the pooled sums minus one device are exactly the sums of the others.
package struct PopulationSums: Sendable {
    /// Session and exposure sums by hour of week, and how many devices contributed.
    struct Rates: Sendable {
        var sessions = Array(repeating: 0.0, count: HourOfWeek.count)
        var exposure = Array(repeating: 0.0, count: HourOfWeek.count)
        var devices = 0
    }

    /// An ordered pair of app names: `trigger` launched, then a session of `follower`.
    struct NamePair: Hashable, Sendable {
        var trigger: String
        var follower: String
    }

    /// Co-usage sums of one pair, and how many devices recorded successes for it.
    struct PairSums: Sendable {
        var successes = 0.0
        var trials = 0.0
        var devicesWithSuccesses = 0
    }

    /// Devices added (with or without history).
    package internal(set) var devices = 0
    /// Pairs seen after fewer trigger launches (present-day weight) are left out of priors.
    package let minimumPairSupport: Double
    var all = Rates()
    var apps: [String: Rates] = [:]
    var pairs: [NamePair: PairSums] = [:]

    /// Empty sums: no population.
    package init(minimumPairSupport: Double = 5) {
        self.minimumPairSupport = minimumPairSupport
    }

    /// One device's contribution.
    /// - Parameters:
    ///   - model: The device's model, read at its last event.
    ///   - name: The name of each of its app ids.
    ///   - minimumPairSupport: As in ``init(minimumPairSupport:)``.
    /// - Complexity: O(apps × 168 + apps² + pairs) of the device.
    package init(model: DeviceModel, name: (Int32) -> String, minimumPairSupport: Double = 5) {
        self.init(model: model, name: name, minimumPairSupport: minimumPairSupport, includingPairs: true)
    }

    /// One device's contribution, without its co-usage pairs when `includingPairs` is `false`
    /// (what ``PopulationIndex`` computes pair by pair instead).
    init(model: DeviceModel, name: (Int32) -> String, minimumPairSupport: Double, includingPairs: Bool) {
        self.init(minimumPairSupport: minimumPairSupport)
        devices = 1
        guard let now = model.lastEventTime else { return }
        let f = model.scale.readFactor(at: now)
        let exposureHours = model.exposure.map { Self.quantized($0 * f / 3600) }
        all.devices = 1
        all.exposure = exposureHours
        all.sessions = model.sessionsAll.map { Self.quantized($0 * f) }
        // Apps are visited in id order so that two ids sharing a name (only the unnamed "")
        // add up the same way every run.
        let ids = model.apps.keys.sorted()
        for id in ids {
            let state = model.apps[id]!
            guard state.sessionTotal > 0 else { continue }
            var rates = apps[name(id)] ?? Rates()
            for s in 0..<HourOfWeek.count {
                rates.sessions[s] += Self.quantized(state.sessions[s] * f)
                rates.exposure[s] += exposureHours[s]
            }
            rates.devices = 1
            apps[name(id)] = rates
        }
        guard includingPairs else { return }
        var withSuccesses: Set<NamePair> = []
        model.pairSuccesses.forEach { key, successes in
            let x = Int32(bitPattern: UInt32(key >> 32)), y = Int32(bitPattern: UInt32(truncatingIfNeeded: key))
            let pair = NamePair(trigger: name(x), follower: name(y))
            pairs[pair, default: PairSums()].successes += Self.quantized(successes * f)
            withSuccesses.insert(pair)
        }
        for pair in withSuccesses { pairs[pair]!.devicesWithSuccesses = 1 }
        for x in model.triggerTrials.keys.sorted() {
            let trials = Self.quantized(model.triggerTrials[x]! * f)
            let nx = name(x)
            for y in ids where y != x && model.apps[y]!.sessionTotal > 0 {
                pairs[NamePair(trigger: nx, follower: name(y)), default: PairSums()].trials += trials
            }
        }
    }

    /// Rounds to a multiple of 2⁻²⁰, so that sums of such numbers are exact.
    @inline(__always)
    static func quantized(_ x: Double) -> Double { (x * 1_048_576).rounded() / 1_048_576 }

    /// Adds a device's contribution (``init(model:name:minimumPairSupport:)``).
    /// - Complexity: O(the contribution's apps × 168 + pairs).
    package mutating func add(_ other: PopulationSums) { merge(other, sign: 1) }

    /// Takes a contribution added before out again (a device's state before new events).
    /// - Complexity: O(the contribution's apps × 168 + pairs).
    package mutating func remove(_ other: PopulationSums) { merge(other, sign: -1) }

    private mutating func merge(_ other: PopulationSums, sign: Double) {
        let k = Int(sign)
        devices += k * other.devices
        Self.merge(&all, other.all, sign: sign)
        for (name, rates) in other.apps {
            var mine = apps[name] ?? Rates()
            Self.merge(&mine, rates, sign: sign)
            apps[name] = mine.devices == 0 ? nil : mine
        }
        for (pair, sums) in other.pairs {
            var mine = pairs[pair] ?? PairSums()
            mine.successes += sign * sums.successes
            mine.trials += sign * sums.trials
            mine.devicesWithSuccesses += k * sums.devicesWithSuccesses
            pairs[pair] = mine.devicesWithSuccesses == 0 && mine.trials == 0 ? nil : mine
        }
    }

    private static func merge(_ mine: inout Rates, _ other: Rates, sign: Double) {
        for s in 0..<HourOfWeek.count {
            mine.sessions[s] += sign * other.sessions[s]
            mine.exposure[s] += sign * other.exposure[s]
        }
        mine.devices += Int(sign) * other.devices
    }

    /// The prior these sums stand for.
    /// - Complexity: O(app names × 168 + pairs).
    package func prior() -> PopulationPrior {
        var prior = PopulationPrior(globalRates: Self.globalRates(all))
        prior.devices = devices
        for (name, rates) in apps where rates.devices > 0 { prior.appRates[name] = Self.appRates(rates) }
        for (pair, sums) in pairs {
            if let p = probability(sums) { prior.pairs[pair.trigger, default: [:]][pair.follower] = p }
        }
        return prior
    }

    /// The prior of a device built from every *other* device: these sums minus `own`,
    /// translated to the device's app ids. Equal to `DevicePrior(others.prior(), apps: apps)`
    /// with `others` the sums of the other devices alone.
    ///
    /// - Parameters:
    ///   - own: The device's contribution, as added to these sums.
    ///   - apps: The device's apps: id → name.
    /// - Complexity: O(apps × 168 + apps²) of the device; nothing proportional to other devices.
    package func devicePrior(excluding own: PopulationSums, apps deviceApps: [Int32: String]) -> DevicePrior {
        var prior = devicePriorRates(excluding: own, apps: deviceApps)
        var translated: [UInt64: Double] = [:]
        for (x, nx) in deviceApps {
            for (y, ny) in deviceApps where y != x {
                let pair = NamePair(trigger: nx, follower: ny)
                guard var others = pairs[pair] else { continue }
                if let mine = own.pairs[pair] {
                    others.successes -= mine.successes
                    others.trials -= mine.trials
                    others.devicesWithSuccesses -= mine.devicesWithSuccesses
                }
                if let p = probability(others) { translated[DeviceModel.pairKey(x, y)] = p }
            }
        }
        prior.pairs = PairWeights(translated)
        return prior
    }

    /// The rates of ``devicePrior(excluding:apps:)`` (global and per app), without pairs.
    func devicePriorRates(excluding own: PopulationSums, apps deviceApps: [Int32: String]) -> DevicePrior {
        var prior = DevicePrior.none
        prior.globalRates = Self.globalRates(Self.difference(all, own.all))
        for (id, name) in deviceApps {
            guard let pooled = apps[name] else { continue }
            let others = own.apps[name].map { Self.difference(pooled, $0) } ?? pooled
            if others.devices > 0 { prior.appRates[id] = Self.appRates(others) }
        }
        return prior
    }

    /// ``devicePrior(excluding:apps:)`` for a device whose app symbols index `names` (only the
    /// names the population knows are translated).
    package func devicePrior(excluding own: PopulationSums, names: [String]) -> DevicePrior {
        var deviceApps: [Int32: String] = [:]
        for (i, name) in names.enumerated() where apps[name] != nil { deviceApps[Int32(i)] = name }
        return devicePrior(excluding: own, apps: deviceApps)
    }

    private static func difference(_ a: Rates, _ b: Rates) -> Rates {
        var d = a
        merge(&d, b, sign: -1)
        return d
    }

    static func globalRates(_ all: Rates) -> [Double] {
        (0..<HourOfWeek.count).map { s in
            all.exposure[s] > 0
                ? (all.sessions[s] + PopulationPrior.genericGlobal[s]) / (all.exposure[s] + 1) : PopulationPrior.genericGlobal[s]
        }
    }

    static func appRates(_ rates: Rates) -> [Double] {
        (0..<HourOfWeek.count).map { s in rates.exposure[s] > 0 ? rates.sessions[s] / rates.exposure[s] : 0 }
    }

    /// A pair's pooled probability: only pairs some device saw succeed, with enough trials.
    func probability(_ sums: PairSums) -> Double? {
        guard sums.devicesWithSuccesses > 0, sums.trials >= minimumPairSupport else { return nil }
        return sums.successes / sums.trials
    }
}
