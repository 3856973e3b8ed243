extension Store {
    /// A device's events in [`fromMicros`, `beforeMicros`), with the publishes to every device,
    /// in the order a replay delivers them: by time; at one instant publishes, then `state` rows,
    /// then launches and fetches; then by id (ingest order). What a plan is made from.
    /// - Complexity: O(log n + the rows read), through the index on (device, time) (schema 4).
    package func deviceHistory(
        ofDevice device: Int64, fromMicros: Int64 = .min, beforeMicros micros: Int64, _ body: (StoredEvent) throws -> Void
    ) throws {
        let s = try connection.cached("""
            SELECT id, time_us, utc_offset_s, device_id, app_id, kind, result, bytes, duration_ms, network, power, battery, low_power
            FROM event_log WHERE (device_id = ?1 OR device_id IS NULL) AND time_us >= ?3 AND time_us < ?2
            ORDER BY time_us, CASE kind WHEN 2 THEN 0 WHEN 3 THEN 1 ELSE 2 END, id
            """)
        defer { s.reset() }
        try s.bind([.integer(device), .integer(micros), .integer(fromMicros)])
        while try s.step() {
            let id = s.int(0)
            try body(StoredEvent(
                id: id, timeMicros: s.int(1), utcOffsetSeconds: Int32(truncatingIfNeeded: s.int(2)),
                device: s.optionalInt(3), app: s.int(4), kind: try kind(s.int(5), row: id),
                result: try s.optionalInt(6).map { v throws(StoreError) in try result(v, row: id) }, bytes: s.optionalInt(7),
                durationMs: s.optionalInt(8), conditions: Self.conditions(s, from: 9)))
        }
    }
}
