/// ``PopulationSums`` with its co-usage pairs indexed, so that a device's leave-one-out prior
/// costs O(its apps × 168 + the pooled pairs its apps trigger) instead of O(its apps²) lookups
/// of pairs of names: what `predict` and `serve` pay on each device they answer for.
///
/// Only pairs that can enter a prior are indexed: some device saw them succeed and they had at
/// least `minimumPairSupport` trials (taking a device out can only lower both). The prior is
/// bit for bit ``PopulationSums/devicePrior(excluding:apps:)``: the same subtractions of the
/// same numbers.
package struct PopulationIndex: Sendable {
    /// The sums indexed (without their pairs when decoded by ``init(binary:)``: those are in
    /// the index).
    package let sums: PopulationSums
    /// App names, numbered, and by number.
    private let names: [String: Int32]
    private let numbered: [String]
    /// By trigger name number: the pairs that can enter a prior.
    private let eligible: [[Eligible]]
    /// Whether `sums` lacks its pairs.
    private let pairsOnlyIndexed: Bool

    private struct Eligible: Sendable {
        var follower: Int32
        var sums: PopulationSums.PairSums
    }

    /// Indexes sums.
    /// - Complexity: O(app names + pairs).
    package init(_ sums: PopulationSums) {
        self.sums = sums
        var names: [String: Int32] = [:]
        var numbered: [String] = []
        func number(_ name: String) -> Int32 {
            if let n = names[name] { return n }
            let n = Int32(numbered.count)
            names[name] = n
            numbered.append(name)
            return n
        }
        var eligible: [[Eligible]] = []
        for (pair, pairSums) in sums.pairs where pairSums.devicesWithSuccesses > 0 && pairSums.trials >= sums.minimumPairSupport {
            let trigger = Int(number(pair.trigger)), follower = number(pair.follower)
            if eligible.count <= trigger { eligible += Array(repeating: [], count: trigger + 1 - eligible.count) }
            eligible[trigger].append(Eligible(follower: follower, sums: pairSums))
        }
        self.names = names
        self.numbered = numbered
        self.eligible = eligible
        pairsOnlyIndexed = false
    }

    /// Decodes saved sums (``PopulationSums/binaryEncoded()``) straight into an index, hashing
    /// each app name once, not each pair: what a process that only reads pays for the sums.
    /// - Throws: ``BinaryReader/Malformed`` for damaged or foreign bytes.
    /// - Complexity: O(size of the sums).
    package init(binary bytes: UnsafeRawBufferPointer) throws {
        var numbered: [String] = []
        var candidates: [(trigger: Int32, follower: Int32, sums: PopulationSums.PairSums)] = []
        let sums = try PopulationSums(binary: bytes, names: &numbered) { trigger, follower, pairSums in
            if pairSums.devicesWithSuccesses > 0 { candidates.append((trigger, follower, pairSums)) }
            return false
        }
        var eligible = [[Eligible]](repeating: [], count: numbered.count)
        for c in candidates where c.sums.trials >= sums.minimumPairSupport {
            guard c.trigger >= 0, c.follower >= 0, Int(c.trigger) < numbered.count, Int(c.follower) < numbered.count else {
                throw BinaryReader.Malformed()
            }
            eligible[Int(c.trigger)].append(Eligible(follower: c.follower, sums: c.sums))
        }
        var names: [String: Int32] = [:]
        names.reserveCapacity(numbered.count)
        for (i, name) in numbered.enumerated() { names[name] = Int32(i) }
        self.sums = sums
        self.names = names
        self.numbered = numbered
        self.eligible = eligible
        pairsOnlyIndexed = true
    }

    /// The sums with the pairs a prior can use (all of them, unless decoded without).
    private var sumsForPriors: PopulationSums {
        guard pairsOnlyIndexed else { return sums }
        var withPairs = sums
        for (trigger, pairs) in eligible.enumerated() {
            for pair in pairs {
                withPairs.pairs[.init(trigger: numbered[trigger], follower: numbered[Int(pair.follower)])] = pair.sums
            }
        }
        return withPairs
    }

    /// The prior of a device from every *other* device: ``PopulationSums/devicePrior(excluding:apps:)``
    /// with `own` the contribution of `pooled` (none when `nil`).
    ///
    /// - Parameters:
    ///   - pooled: The device's model as it was added to the sums (`nil`: not in them).
    ///   - name: The name of each of its app ids.
    ///   - apps: The apps to translate the prior to: id → name.
    /// - Complexity: O(apps × 168 + the eligible pairs the apps trigger).
    package func devicePrior(excluding pooled: DeviceModel?, name: (Int32) -> String, apps deviceApps: [Int32: String]) -> DevicePrior {
        // Two ids with one name pool together; the index assumes one id a name (the store's case).
        let ownNames = pooled.map { model in model.apps.keys.map(name) } ?? []
        guard Set(deviceApps.values).count == deviceApps.count, Set(ownNames).count == ownNames.count else {
            // The pairs a prior cannot use change nothing (taking a device out only lowers sums).
            return sumsForPriors.devicePrior(excluding: pooled.map { PopulationSums(model: $0, name: name) } ?? PopulationSums(), apps: deviceApps)
        }
        var prior = rates(excluding: pooled, name: name, apps: deviceApps)
        // The device's app id by name number (-1: none), and its apps in id order, so that the
        // pairs come out in key order (trigger, then follower) with no hashing and no sort.
        var local = [Int32](repeating: -1, count: names.count)
        var triggers: [(id: Int32, number: Int32)] = []
        for (id, appName) in deviceApps {
            guard let n = names[appName], Int(n) < local.count else { continue }
            local[Int(n)] = id
            if Int(n) < eligible.count { triggers.append((id, n)) }
        }
        triggers.sort { $0.id < $1.id }
        // The device's own share of a pair, as `PopulationSums(model:name:)` computes it.
        let f = pooled?.lastEventTime.map { pooled!.scale.readFactor(at: $0) }
        var keys: [UInt64] = []
        var values: [Double] = []
        var row: [(follower: Int32, p: Double)] = []
        for (x, n) in triggers {
            let ownTrials = f.flatMap { f in pooled!.triggerTrials[x].map { PopulationSums.quantized($0 * f) } }
            row.removeAll(keepingCapacity: true)
            for pair in eligible[Int(n)] {
                guard pair.follower != n else { continue }
                let y = local[Int(pair.follower)]
                guard y >= 0 else { continue }
                var others = pair.sums
                if let f, let pooled {
                    if let successes = pooled.pairSuccesses[DeviceModel.pairKey(x, y)] {
                        others.successes -= PopulationSums.quantized(successes * f)
                        others.devicesWithSuccesses -= 1
                    }
                    if let ownTrials, let state = pooled.apps[y], state.sessionTotal > 0 { others.trials -= ownTrials }
                }
                if let p = sums.probability(others) { row.append((y, p)) }
            }
            row.sort { $0.follower < $1.follower }
            for (y, p) in row {
                keys.append(DeviceModel.pairKey(x, y))
                values.append(p)
            }
        }
        // Keys ascend (ids are non-negative): the sorted form, as a decoded prior has.
        prior.pairs = PairWeights(sortedKeys: keys, values: values) ?? PairWeights(Dictionary(uniqueKeysWithValues: zip(keys, values)))
        return prior
    }

    /// ``PopulationSums/devicePriorRates(excluding:apps:)`` with the contribution of `pooled`
    /// (apps named once each), computed slot by slot: the same operations on the same numbers,
    /// without building the contribution.
    private func rates(excluding pooled: DeviceModel?, name: (Int32) -> String, apps deviceApps: [Int32: String]) -> DevicePrior {
        let n = HourOfWeek.count
        var prior = DevicePrior.none
        let f = pooled?.lastEventTime.map { pooled!.scale.readFactor(at: $0) }
        var exposureHours = [Double](repeating: 0, count: n)
        var all = sums.all
        if let f, let pooled {
            for s in 0..<n {
                exposureHours[s] = PopulationSums.quantized(pooled.exposure[s] * f / 3600)
                all.sessions[s] += -1 * PopulationSums.quantized(pooled.sessionsAll[s] * f)
                all.exposure[s] += -1 * exposureHours[s]
            }
            all.devices -= 1
        }
        prior.globalRates = PopulationSums.globalRates(all)
        var ownApp: [String: Int32] = [:]
        if f != nil, let pooled {
            for (id, state) in pooled.apps where state.sessionTotal > 0 { ownApp[name(id)] = id }
        }
        for (id, appName) in deviceApps {
            guard let pooledRates = sums.apps[appName] else { continue }
            guard let f, let pooled, let own = ownApp[appName] else {
                if pooledRates.devices > 0 { prior.appRates[id] = PopulationSums.appRates(pooledRates) }
                continue
            }
            guard pooledRates.devices - 1 > 0 else { continue }
            let sessions = pooled.apps[own]!.sessions
            prior.appRates[id] = (0..<n).map { s in
                let exposure = pooledRates.exposure[s] + -1 * exposureHours[s]
                return exposure > 0 ? (pooledRates.sessions[s] + -1 * PopulationSums.quantized(sessions[s] * f)) / exposure : 0
            }
        }
        return prior
    }
}
