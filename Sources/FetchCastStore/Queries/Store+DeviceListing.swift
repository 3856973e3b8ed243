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
    /// - Complexity: O(log devices + the page's devices × their files' aggregates): the devices
    ///   are walked in name order through their unique index, each one's per-file counts read
    ///   through `file_counts_device` (schema 5; before, every page scanned every file's counts).
    package func deviceSummaries(after: String?, limit: Int) throws(StoreError) -> [DeviceListing] {
        let s = try connection.cached(after == nil ? Self.firstDevicePage : Self.devicePageAfter)
        defer { s.reset() }
        try s.bind([after.map { .text($0) } ?? .null, .integer(Int64(max(0, limit)))])
        var out: [DeviceListing] = []
        while try s.step() {
            out.append(DeviceListing(device: s.text(0), events: s.int(1), firstMicros: s.int(2), lastMicros: s.int(3)))
        }
        return out
    }

    /// How many devices have an event after `micros` (Unix microseconds, UTC): the devices a
    /// plan from `micros` would have to replay from the start of their history.
    /// - Complexity: one pass over the per-file counts (`file_counts`, a row per file, device,
    ///   app and kind), not over the events.
    package func devicesWithEvents(after micros: Int64) throws(StoreError) -> Int64 {
        try connection.scalarInt(
            "SELECT count(*) FROM (SELECT 1 FROM file_counts WHERE device_id IS NOT NULL GROUP BY device_id HAVING max(last_us) > ?)",
            [.integer(micros)])
    }

    /// The first page of devices (`?2`: the page's size).
    static let firstDevicePage = """
        SELECT d.name, sum(c.n), min(c.first_us), max(c.last_us)
        FROM devices d JOIN file_counts c ON c.device_id = d.id
        GROUP BY d.name ORDER BY d.name LIMIT ?2
        """

    /// A page of devices after `?1` (two statements rather than `?1 IS NULL OR d.name > ?1`,
    /// which keeps SQLite from starting its walk of the names at `?1`).
    static let devicePageAfter = """
        SELECT d.name, sum(c.n), min(c.first_us), max(c.last_us)
        FROM devices d JOIN file_counts c ON c.device_id = d.id
        WHERE d.name > ?1
        GROUP BY d.name ORDER BY d.name LIMIT ?2
        """
}
