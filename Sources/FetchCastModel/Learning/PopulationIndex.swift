/// ``PopulationSums`` with its co-usage pairs indexed, so that a device's leave-one-out prior
/// costs O(its apps × 168 + the pooled pairs its apps trigger) instead of O(its apps²) lookups
/// of pairs of names: what `predict` and `serve` pay on each device they answer for.
///
/// Only pairs that can enter a prior are indexed: some device saw them succeed and they had at
/// least `minimumPairSupport` trials (taking a device out can only lower both). The prior is
/// bit for bit ``PopulationSums/devicePrior(excluding:apps:)``: the same subtractions of the
/// same numbers.
public struct PopulationIndex: Sendable {
    /// The sums indexed.
    public let sums: PopulationSums
    /// App names, numbered.
    private let names: [String: Int32]
    /// By trigger name number: the pairs that can enter a prior.
    private let eligible: [[Eligible]]

    private struct Eligible: Sendable {
        var follower: Int32
        var sums: PopulationSums.PairSums
    }

    /// Indexes sums.
    /// - Complexity: O(app names + pairs).
    public init(_ sums: PopulationSums) {
        self.sums = sums
        var names: [String: Int32] = [:]
        func number(_ name: String) -> Int32 {
            if let n = names[name] { return n }
            let n = Int32(names.count)
            names[name] = n
            return n
        }
        var eligible: [[Eligible]] = []
        for (pair, pairSums) in sums.pairs where pairSums.devicesWithSuccesses > 0 && pairSums.trials >= sums.minimumPairSupport {
            let trigger = Int(number(pair.trigger)), follower = number(pair.follower)
            if eligible.count <= trigger { eligible += Array(repeating: [], count: trigger + 1 - eligible.count) }
            eligible[trigger].append(Eligible(follower: follower, sums: pairSums))
        }
        self.names = names
        self.eligible = eligible
    }

    /// The prior of a device from every *other* device: ``PopulationSums/devicePrior(excluding:apps:)``
    /// with `own` the contribution of `pooled` (none when `nil`).
    ///
    /// - Parameters:
    ///   - pooled: The device's model as it was added to the sums (`nil`: not in them).
    ///   - name: The name of each of its app ids.
    ///   - apps: The apps to translate the prior to: id → name.
    /// - Complexity: O(apps × 168 + the eligible pairs the apps trigger).
    public func devicePrior(excluding pooled: DeviceModel?, name: (Int32) -> String, apps deviceApps: [Int32: String]) -> DevicePrior {
        let support = sums.minimumPairSupport
        let own = pooled.map { PopulationSums(model: $0, name: name, minimumPairSupport: support, includingPairs: false) }
            ?? PopulationSums()
        // Two ids with one name pool together; the index assumes one id a name (the store's case).
        let ownNames = pooled.map { model in model.apps.keys.map(name) } ?? []
        guard Set(deviceApps.values).count == deviceApps.count, Set(ownNames).count == ownNames.count else {
            return sums.devicePrior(excluding: pooled.map { PopulationSums(model: $0, name: name, minimumPairSupport: support) } ?? own,
                                    apps: deviceApps)
        }
        var prior = sums.devicePriorRates(excluding: own, apps: deviceApps)
        var local: [Int32: Int32] = [:]  // name number → the device's app id
        for (id, appName) in deviceApps { if let n = names[appName] { local[n] = id } }
        // The device's own share of a pair, as `PopulationSums(model:name:)` computes it.
        let f = pooled?.lastEventTime.map { pooled!.scale.readFactor(at: $0) }
        var translated: [UInt64: Double] = [:]
        for (n, x) in local where Int(n) < eligible.count {
            let ownTrials = f.flatMap { f in pooled!.triggerTrials[x].map { PopulationSums.quantized($0 * f) } }
            for pair in eligible[Int(n)] {
                guard pair.follower != n, let y = local[pair.follower] else { continue }
                var others = pair.sums
                if let f, let pooled {
                    if let successes = pooled.pairSuccesses[DeviceModel.pairKey(x, y)] {
                        others.successes -= PopulationSums.quantized(successes * f)
                        others.devicesWithSuccesses -= 1
                    }
                    if let ownTrials, let state = pooled.apps[y], state.sessionTotal > 0 { others.trials -= ownTrials }
                }
                if let p = sums.probability(others) { translated[DeviceModel.pairKey(x, y)] = p }
            }
        }
        prior.pairs = PairWeights(translated)
        return prior
    }
}
