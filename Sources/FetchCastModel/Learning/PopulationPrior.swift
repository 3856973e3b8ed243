/// What other devices say, by app name: the prior each device's estimates are shrunk toward,
/// so that a new device or a new app gets sensible fetch times on day one.
///
/// Built from the models of *other* devices (the store's other devices for `predict`; the
/// training users for `evaluate --train-devices`), never from the device being predicted.
public struct PopulationPrior: Sendable, Codable, Hashable {
    /// Session starts per observed hour, by hour of week, per app (pooled over devices using it).
    public var appRates: [String: [Double]] = [:]
    /// Session starts of all apps per observed hour, by hour of week (pooled over devices).
    public var globalRates: [Double]
    /// P(a session of Y starts within τ after a launch of X), pooled: `pairs[X][Y]`.
    public var pairs: [String: [String: Double]] = [:]
    /// Devices it was built from.
    public var devices: Int = 0

    /// A generic diurnal shape used when no population is available: few sessions at night,
    /// more by day. Not fitted to any data; it only orders hours before a device has history.
    public static let genericGlobal: [Double] = (0..<HourOfWeek.count).map { slot in
        let hour = slot % 24
        switch hour {
        case 0..<6: return 0.5
        case 6..<8: return 2
        case 8..<22: return 4
        default: return 2
        }
    }

    /// No population: only the generic shape.
    public static let none = PopulationPrior(globalRates: genericGlobal)

    /// Creates a prior.
    public init(appRates: [String: [Double]] = [:], globalRates: [Double], pairs: [String: [String: Double]] = [:], devices: Int = 0) {
        self.appRates = appRates
        self.globalRates = globalRates
        self.pairs = pairs
        self.devices = devices
    }

    /// Pools device models.
    ///
    /// - Parameters:
    ///   - models: Each device's model and the names of its app ids.
    ///   - minimumPairSupport: Pairs seen after fewer trigger launches (present-day weight) are left out.
    /// - Complexity: O(devices × (apps × 168 + pairs)).
    public static func build(from models: [(model: DeviceModel, name: (Int32) -> String)], minimumPairSupport: Double = 5) -> PopulationPrior {
        var sums = PopulationSums(minimumPairSupport: minimumPairSupport)
        for (model, name) in models {
            sums.add(PopulationSums(model: model, name: name, minimumPairSupport: minimumPairSupport))
        }
        return sums.prior()
    }
}

/// A ``PopulationPrior`` looked up by a device's own app ids (built once per device).
public struct DevicePrior: Sendable {
    var appRates: [Int32: [Double]] = [:]
    var globalRates: [Double]
    var pairs = PairWeights()

    /// Whether other devices lent this prior anything: their sessions of some app, or their
    /// hours (else it is ``PopulationPrior/genericGlobal``, a shape no device measured: the
    /// prior of a store's only device).
    package var lendsOtherDevicesTimes: Bool {
        !appRates.isEmpty || zip(globalRates, PopulationPrior.genericGlobal).contains { abs($0 - $1) > 1e-9 }
    }

    /// Translates a prior to app ids.
    /// - Parameters:
    ///   - prior: The population prior.
    ///   - apps: The device's apps: id → name.
    public init(_ prior: PopulationPrior, apps: [Int32: String]) {
        globalRates = prior.globalRates
        for (id, name) in apps {
            if let rates = prior.appRates[name] { appRates[id] = rates }
        }
        var translated: [UInt64: Double] = [:]
        for (x, nx) in apps {
            guard let ys = prior.pairs[nx] else { continue }
            for (y, ny) in apps where y != x {
                if let p = ys[ny] { translated[DeviceModel.pairKey(x, y)] = p }
            }
        }
        pairs = PairWeights(translated)
    }

    /// Translates a prior for a device whose app symbols index `names`.
    public init(_ prior: PopulationPrior, names: [String]) {
        var apps: [Int32: String] = [:]
        for (i, n) in names.enumerated() where prior.appRates[n] != nil || prior.pairs[n] != nil { apps[Int32(i)] = n }
        self.init(prior, apps: apps)
    }

    /// The generic prior.
    public static let none = DevicePrior(.none, apps: [:])
}
