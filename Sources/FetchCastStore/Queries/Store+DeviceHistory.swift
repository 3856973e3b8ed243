extension Store {
    /// A device's events in [`fromMicros`, `beforeMicros`), with the publishes to every device,
    /// in plain time order: by time, then by id (ingest order). What a plan is made from, once
    /// each instant is put in the order a policy is told of it (``InstantOrder``, FetchCastCore).
    /// - Complexity: O(log n + the rows read), through the index on (device, time) (schema 4).
    package func deviceHistory(
        ofDevice device: Int64, fromMicros: Int64 = .min, beforeMicros micros: Int64, _ body: (StoredEvent) throws -> Void
    ) throws {
        let s = try connection.cached("""
            SELECT \(Self.storedEventColumns) FROM event_log WHERE (device_id = ?1 OR device_id IS NULL) AND time_us >= ?3 AND time_us < ?2
            ORDER BY time_us, id
            """)
        defer { s.reset() }
        try s.bind([.integer(device), .integer(micros), .integer(fromMicros)])
        while try s.step() { try body(try storedEvent(s)) }
    }
}

extension Store {
    /// Whether an event of `device`, or a publish to every device, with id greater than
    /// `afterID` is dated before `beforeMicros`: whether what a device's history said up to that
    /// instant has changed since the store's last event was `afterID`.
    /// - Complexity: O(events after `afterID`) read through the id order when they are few (at
    ///   most ``historyCheckScanLimit``), else O(log n + the device's events before
    ///   `beforeMicros`) through the (device, time) index.
    package func hasEvents(ofDevice device: Int64, afterID: Int64, beforeMicros: Int64) throws(StoreError) -> Bool {
        let few = try lastEventID() - afterID <= Self.historyCheckScanLimit
        // NOT INDEXED keeps SQLite on the id (rowid) range; the other form lets it take the index.
        let s = try connection.cached(few
            ? "SELECT 1 FROM event_log NOT INDEXED WHERE id > ?1 AND (device_id = ?2 OR device_id IS NULL) AND time_us < ?3 LIMIT 1"
            : "SELECT 1 FROM event_log WHERE (device_id = ?2 OR device_id IS NULL) AND time_us < ?3 AND id > ?1 LIMIT 1")
        defer { s.reset() }
        try s.bind([.integer(afterID), .integer(device), .integer(beforeMicros)])
        return try s.step()
    }

    /// Events after an id that ``hasEvents(ofDevice:afterID:beforeMicros:)`` reads in id order.
    static let historyCheckScanLimit: Int64 = 50_000
}
