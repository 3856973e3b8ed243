import FetchCastCore

/// The optional columns `event_log` keeps for an event, on every engine: a `state` row's
/// conditions (network, power, battery, Low Power Mode), any other row's result, bytes and
/// duration; the others NULL. What an append writes, and what duplicate rows are compared on.
package struct StoredColumns: Hashable, Sendable {
    package var result: Int64?, bytes: Int64?, duration: Int64?
    package var network: Int64?, power: Int64?, battery: Int64?, lowPower: Int64?

    /// The columns an append writes for `e`.
    package init(_ e: EncodedEvent) {
        if e.kind == .state {
            let c = e.conditions
            network = c.network.map { Int64($0.rawValue) }
            power = c.power.map { Int64($0.rawValue) }
            battery = c.battery.map { Int64($0) }
            lowPower = c.lowPower.map { $0 ? 1 : 0 }
        } else {
            result = e.result.map { Int64($0.rawValue) }
            bytes = e.bytes
            duration = e.durationMs
        }
    }

    /// Columns as read back from a stored row.
    package init(result: Int64?, bytes: Int64?, duration: Int64?, network: Int64?, power: Int64?, battery: Int64?, lowPower: Int64?) {
        (self.result, self.bytes, self.duration) = (result, bytes, duration)
        (self.network, self.power, self.battery, self.lowPower) = (network, power, battery, lowPower)
    }
}
