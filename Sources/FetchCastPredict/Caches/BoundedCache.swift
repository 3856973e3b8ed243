/// Values kept up to about a number of bytes (each value's cost is the caller's estimate),
/// dropping the least recently used first: the bookkeeping of ``ModelCache`` and
/// ``SchedulerCache``. A value, not a lock: its owner serializes access (a `Mutex`).
package struct BoundedCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    /// About how many bytes the values may take.
    package let capacityBytes: Int
    private var entries: [Key: (value: Value, cost: Int, stamp: UInt64)] = [:]
    /// Keys in the order they were last used (oldest first, from `head`); a key appears again
    /// each time it is used, and only its latest appearance (`stamp`) counts.
    private var order: [(key: Key, stamp: UInt64)] = []
    private var head = 0
    private var clock: UInt64 = 0
    /// The costs of the values held.
    package private(set) var bytes = 0

    package init(capacityBytes: Int) { self.capacityBytes = capacityBytes }

    /// Values held.
    package var count: Int { entries.count }

    /// Whether a value is kept for `key` (not a use).
    package func contains(_ key: Key) -> Bool { entries[key] != nil }

    /// The value kept for `key`, if any; counts as a use.
    package mutating func value(for key: Key) -> Value? {
        guard let entry = entries[key] else { return nil }
        touch(key, value: entry.value, cost: entry.cost)
        return entry.value
    }

    /// Keeps `value` for `key`, replacing what was kept for it; a value costing more than the
    /// capacity is not kept.
    /// - Returns: The values it dropped (the one replaced, the least recently used), for the
    ///   caller to release after its lock: freeing a large value is not free.
    @discardableResult
    package mutating func keep(_ value: Value, for key: Key, cost: Int) -> [Value] {
        var dropped: [Value] = []
        if let old = entries.removeValue(forKey: key) {
            bytes -= old.cost
            dropped.append(old.value)
        }
        guard cost <= capacityBytes else { return dropped }
        while bytes + cost > capacityBytes, head < order.count {
            let (oldest, stamp) = order[head]
            head += 1
            if let entry = entries[oldest], entry.stamp == stamp {
                entries[oldest] = nil
                bytes -= entry.cost
                dropped.append(entry.value)
            }
        }
        bytes += cost
        touch(key, value: value, cost: cost)
        return dropped
    }

    /// Drops every value.
    package mutating func removeAll() {
        entries = [:]
        order = []
        head = 0
        bytes = 0
    }

    private mutating func touch(_ key: Key, value: Value, cost: Int) {
        clock += 1
        entries[key] = (value, cost, clock)
        order.append((key, clock))
        // Drop the used-up prefix and stale appearances once they outnumber the live ones.
        if order.count > 1024, order.count > 2 * entries.count + 64 {
            order = order[head...].filter { entries[$0.key]?.stamp == $0.stamp }
            head = 0
        }
    }
}
