/// One device of the store with what it holds, from the per-file aggregates (no event scan).
package struct DeviceListing: Sendable, Hashable, Codable {
    /// The device id as ingested.
    package var device: String
    /// Events of the device (every kind).
    package var events: Int64
    /// Its first event, Unix microseconds (UTC).
    package var firstMicros: Int64
    /// Its last event, Unix microseconds (UTC).
    package var lastMicros: Int64

    /// Creates a summary.
    package init(device: String, events: Int64, firstMicros: Int64, lastMicros: Int64) {
        self.device = device
        self.events = events
        self.firstMicros = firstMicros
        self.lastMicros = lastMicros
    }
}

extension Store {
    /// Devices in name order (bytewise), after `after` when given, at most `limit` of them:
    /// one page of a listing paginated by device id.
    ///
    /// Devices whose every file was forgotten are not listed. Names go to SQLite as bound
    /// parameters only.
    /// - Complexity: O(rows of `file_counts`) per page (the aggregates, not the events).
    package func deviceSummaries(after: String?, limit: Int) throws(StoreError) -> [DeviceListing] {
        let s = try connection.prepare("""
            SELECT d.name, sum(c.n), min(c.first_us), max(c.last_us)
            FROM devices d JOIN file_counts c ON c.device_id = d.id
            WHERE ?1 IS NULL OR d.name > ?1
            GROUP BY d.id ORDER BY d.name LIMIT ?2
            """)
        try s.bind([after.map { .text($0) } ?? .null, .integer(Int64(max(0, limit)))])
        var out: [DeviceListing] = []
        while try s.step() {
            out.append(DeviceListing(device: s.text(0), events: s.int(1), firstMicros: s.int(2), lastMicros: s.int(3)))
        }
        return out
    }
}
