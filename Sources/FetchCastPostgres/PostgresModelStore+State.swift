import FetchCastStore
import PostgresNIO

/// Model state in two tables: a device's states (``DeviceStateKey``: `device:3`, `plans:3:…`)
/// in `device_state`, keyed by the device's `device_id` and so sharded with its events; the
/// fleet's (`population`, `epoch`, …) in `model_state`, small and needed by every device.
extension PostgresModelStore {
    package func withModelState<T>(key: String, _ body: (_ watermark: Int64, _ state: UnsafeRawBufferPointer) -> T) async throws -> T? {
        if let kept = prefetched?.states[key] {
            guard let (watermark, state) = kept else { return nil }
            return state.withUnsafeReadableBytes { body(watermark, $0) }
        }
        let rows: PostgresQueryResult
        if let seq = DeviceStateKey.device(of: key) {
            guard let device = try await deviceID(seq: seq) else { return nil }
            rows = try await query("SELECT watermark, state FROM device_state WHERE device_id = \(device) AND key = \(key)")
        } else {
            rows = try await query("SELECT watermark, state FROM model_state WHERE key = \(key)")
        }
        guard let row = rows.first else { return nil }
        let (watermark, state) = try row.decode((Int64, ByteBuffer).self)
        return state.withUnsafeReadableBytes { body(watermark, $0) }
    }

    package func modelStateWatermark(key: String) async throws -> Int64? {
        if let kept = prefetched?.states[key] { return kept?.watermark }
        if let seq = DeviceStateKey.device(of: key) {
            guard let device = try await deviceID(seq: seq) else { return nil }
            return try await scalar("SELECT watermark FROM device_state WHERE device_id = \(device) AND key = \(key)")
        }
        return try await scalar("SELECT watermark FROM model_state WHERE key = \(key)")
    }

    /// One statement a table for many rows (a warm-up batch's schedulers and tables), each
    /// statement at most ``saveStatementBytes`` of states; a key given twice keeps its last
    /// record, as saving them one by one would.
    /// - Throws: `StoreError` for a state of a device the database does not hold.
    package func saveModelStates(_ records: [ModelStateRecord]) async throws {
        var last: [String: Int] = [:]
        for (i, r) in records.enumerated() { last[r.key] = i }
        var start = 0
        while start < records.count {
            var fleet = Rows(), devices = Rows()
            var bytes = 0
            var end = start
            while end < records.count && (bytes == 0 || bytes + records[end].state.count <= Self.saveStatementBytes) {
                let r = records[end]
                if last[r.key] == end {
                    if let seq = DeviceStateKey.device(of: r.key) {
                        guard let device = try await deviceID(seq: seq) else {
                            throw StoreError(path: path, message: "model state \(r.key) names device \(seq), which the database does not hold")
                        }
                        devices.append(r, device: device)
                    } else {
                        fleet.append(r, device: 0)
                    }
                    bytes += max(1, r.state.count)
                }
                end += 1
            }
            start = end
            if !fleet.keys.isEmpty {
                try await run("""
                    INSERT INTO model_state(key, watermark, state)
                    SELECT * FROM unnest(\(fleet.keys)::text[], \(fleet.watermarks)::bigint[], \(fleet.states)::bytea[])
                    ON CONFLICT (key) DO UPDATE SET watermark = EXCLUDED.watermark, state = EXCLUDED.state
                    """)
            }
            if !devices.keys.isEmpty {
                try await run("""
                    INSERT INTO device_state(device_id, key, watermark, state)
                    SELECT * FROM unnest(\(devices.devices)::bigint[], \(devices.keys)::text[], \(devices.watermarks)::bigint[], \(devices.states)::bytea[])
                    ON CONFLICT (device_id, key) DO UPDATE SET watermark = EXCLUDED.watermark, state = EXCLUDED.state
                    """)
            }
        }
    }

    /// The columns of one save statement.
    private struct Rows {
        var devices: [Int64] = [], keys: [String] = [], watermarks: [Int64] = [], states: [ByteBuffer] = []

        mutating func append(_ record: ModelStateRecord, device: Int64) {
            devices.append(device)
            keys.append(record.key)
            watermarks.append(record.watermark)
            states.append(ByteBuffer(bytes: record.state))
        }
    }

    /// The most bytes of states one statement of ``saveModelStates(_:)`` sends.
    static let saveStatementBytes = 16 << 20

    package func deleteModelState(key: String) async throws {
        if let seq = DeviceStateKey.device(of: key) {
            guard let device = try await deviceID(seq: seq) else { return }
            try await run("DELETE FROM device_state WHERE device_id = \(device) AND key = \(key)")
        } else {
            try await run("DELETE FROM model_state WHERE key = \(key)")
        }
    }

    package func deleteModelStates(prefix: String) async throws {
        let above = Store.keyAbove(prefix: prefix)
        if let seq = DeviceStateKey.device(ofPrefix: prefix) {
            guard let device = try await deviceID(seq: seq) else { return }
            try await run("DELETE FROM device_state WHERE device_id = \(device) AND key >= \(prefix) AND key < \(above)")
            return
        }
        try await run("DELETE FROM model_state WHERE key >= \(prefix) AND key < \(above)")
        try await run("DELETE FROM device_state WHERE key >= \(prefix) AND key < \(above)")
    }

    package func modelStates(prefix: String, after: String?, limit: Int) async throws -> [ModelStateRecord] {
        // Each table's page through its key index, then the first `limit` of both.
        let above = Store.keyAbove(prefix: prefix), after = after ?? "", limit = Int64(max(0, limit))
        return try await query("""
            SELECT key, watermark, state FROM (
                (SELECT key, watermark, state FROM model_state WHERE key >= \(prefix) AND key < \(above) AND key > \(after)
                 ORDER BY key LIMIT \(limit))
                UNION ALL
                (SELECT key, watermark, state FROM device_state WHERE key >= \(prefix) AND key < \(above) AND key > \(after)
                 ORDER BY key LIMIT \(limit))) s
            ORDER BY key LIMIT \(limit)
            """).map { row in
            let (key, watermark, state) = try row.decode((String, Int64, ByteBuffer).self)
            return ModelStateRecord(key: key, watermark: watermark, state: Array(buffer: state))
        }
    }

    /// Keys as the statement that reads them at once needs them: the fleet's, and the devices'
    /// with their `device_id`s (a key of a device the database does not hold has no state and
    /// is left out).
    struct StateKeys {
        var fleet: [String] = []
        var deviceKeys: [String] = []
        var devices: [Int64] = []
    }

    func stateKeys(_ keys: [String]) async throws -> StateKeys {
        var split = StateKeys()
        for key in keys {
            if let seq = DeviceStateKey.device(of: key) {
                guard let device = try await deviceID(seq: seq) else { continue }
                split.deviceKeys.append(key)
                if !split.devices.contains(device) { split.devices.append(device) }
            } else {
                split.fleet.append(key)
            }
        }
        return split
    }

    /// The `device_id` of the device numbered `seq`; `nil` when the database holds none. Read
    /// once a process (``DeviceIDsBySeq``), with every device numbered after those held.
    func deviceID(seq: Int64) async throws -> Int64? {
        if let id = deviceIDs.id(of: seq) { return id }
        let highest = deviceIDs.highest
        let rows = seq > highest
            ? try await query("SELECT seq, device_id FROM devices WHERE seq > \(highest)")
            : try await query("SELECT seq, device_id FROM devices WHERE seq = \(seq)")
        deviceIDs.add(try rows.map { try $0.decode((Int64, Int64).self) }.map { (seq: $0.0, id: $0.1) })
        return deviceIDs.id(of: seq)
    }
}
