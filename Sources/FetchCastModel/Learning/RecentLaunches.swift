import DequeModule

/// The launches of a device's last τ, oldest first: what a session start is credited to
/// (co-usage) and where the latest launch before an instant is looked up.
///
/// Launches arrive in time order, so the ones more than τ old are a prefix and leave from the
/// front of a `Deque` at O(1) each: a burst of a million launches within τ costs O(1) per launch,
/// not a scan of the burst on each. A late event (earlier than the last launch kept) makes the
/// order unknown; until the list is in order again expiry scans it, as it always did. Either way
/// the launches kept, and their order, are the same as a scan's: results do not change.
struct RecentLaunches: Sendable {
    private var launches = Deque<DeviceModel.RecentLaunch>()
    /// Whether `launches` is in time order (then the expired ones are a prefix).
    private var inOrder = true

    init() {}

    init(_ launches: some Sequence<DeviceModel.RecentLaunch>) {
        for launch in launches { append(launch) }
    }

    /// Remembers a launch (after the others).
    mutating func append(_ launch: DeviceModel.RecentLaunch) {
        if let last = launches.last, !(launch.time >= last.time) { inOrder = false }
        launches.append(launch)
    }

    /// Forgets the launches more than `tau` before `time` (`time − launch > tau`).
    /// - Complexity: O(1) amortised when launches arrive in time order; else O(count).
    mutating func removeExpired(at time: Double, tau: Double) {
        if inOrder {
            while let first = launches.first, time - first.time > tau { launches.removeFirst() }
        } else {
            launches.removeAll { time - $0.time > tau }
            inOrder = zip(launches, launches.dropFirst()).allSatisfy { $1.time >= $0.time }
        }
    }

    /// The latest launch time strictly before `time`.
    /// - Complexity: O(launches at or after `time`) in time order, else O(count).
    func latest(before time: Double) -> Double? {
        if inOrder { return launches.last(where: { $0.time < time })?.time }
        var best: Double?
        for r in launches where r.time < time { best = Swift.max(best ?? r.time, r.time) }
        return best
    }
}

extension RecentLaunches: RandomAccessCollection, MutableCollection {
    var startIndex: Int { launches.startIndex }
    var endIndex: Int { launches.endIndex }

    subscript(position: Int) -> DeviceModel.RecentLaunch {
        get { launches[position] }
        set { launches[position] = newValue }  // weights only: the times, hence the order, stay
    }
}

extension RecentLaunches: Codable {
    /// An array of launches, as the model's `recent` always was.
    init(from decoder: any Decoder) throws {
        self.init(try [DeviceModel.RecentLaunch](from: decoder))
    }

    func encode(to encoder: any Encoder) throws {
        try Array(launches).encode(to: encoder)
    }
}
