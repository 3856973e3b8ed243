/// Weights keyed by an ordered app pair (``DeviceModel/pairKey(_:_:)``): co-usage successes in a
/// model, pair probabilities in a prior.
///
/// Two forms with the same contents: *sorted* (keys ascending in one array, values in another),
/// which is what decoding stored state produces with no hashing at all, and *hashed* (a
/// dictionary), which learning switches to on its first change. `predict` only reads a
/// decoded model, so it never pays for building a hash table of thousands of pairs.
struct PairWeights: Sendable {
    private var keys: [UInt64] = []
    private var values: [Double] = []
    private var table: [UInt64: Double]?

    init() {}

    /// Takes keys in strictly ascending order and their values.
    /// - Returns: `nil` when the keys are not strictly ascending or the counts differ.
    init?(sortedKeys keys: [UInt64], values: [Double]) {
        guard keys.count == values.count else { return nil }
        var i = 1
        while i < keys.count {
            guard keys[i - 1] < keys[i] else { return nil }
            i += 1
        }
        self.keys = keys
        self.values = values
    }

    /// Takes any pairs (sorted here).
    init(_ pairs: [UInt64: Double]) {
        let sorted = pairs.sorted { $0.key < $1.key }
        keys = sorted.map(\.key)
        values = sorted.map(\.value)
    }

    var count: Int { table?.count ?? keys.count }

    /// The weight of a pair, `nil` when never recorded.
    subscript(key: UInt64) -> Double? {
        if let table { return table[key] }
        var low = 0, high = keys.count
        while low < high {
            let mid = (low + high) >> 1
            if keys[mid] < key { low = mid + 1 } else { high = mid }
        }
        return low < keys.count && keys[low] == key ? values[low] : nil
    }

    /// Adds `weight` to a pair's weight (0 when new).
    mutating func add(_ weight: Double, to key: UInt64) {
        if table == nil { thaw() }
        table![key, default: 0] += weight
    }

    /// Multiplies every weight by `factor`.
    mutating func scale(by factor: Double) {
        if table != nil {
            for key in table!.keys { table![key]! *= factor }
        } else {
            for i in values.indices { values[i] *= factor }
        }
    }

    /// Every pair in ascending key order.
    func sortedPairs() -> [(key: UInt64, value: Double)] {
        if let table { return table.sorted { $0.key < $1.key } }
        return zip(keys, values).map { (key: $0, value: $1) }
    }

    /// Calls `body` for every pair, in no particular order.
    func forEach(_ body: (UInt64, Double) -> Void) {
        if let table {
            for (k, v) in table { body(k, v) }
        } else {
            for i in keys.indices { body(keys[i], values[i]) }
        }
    }

    private mutating func thaw() {
        var t = [UInt64: Double](minimumCapacity: keys.count)
        for i in keys.indices { t[keys[i]] = values[i] }
        table = t
        keys = []
        values = []
    }
}

extension PairWeights: Codable {
    /// Encoded as the dictionary it stands for, so the `Codable` form of a model is unchanged.
    init(from decoder: Decoder) throws {
        self.init(try decoder.singleValueContainer().decode([UInt64: Double].self))
    }

    func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        var t: [UInt64: Double] = [:]
        forEach { t[$0] = $1 }
        try c.encode(t)
    }
}
