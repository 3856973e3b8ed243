/// The store's tables, the stable `events` view, and the migrations between schema versions.
///
/// The schema version is SQLite's `PRAGMA user_version`. Each migration runs once, in order,
/// inside the transaction that opens the store for writing, so two processes that open a new
/// store at the same moment cannot both create it.
enum Schema {
    /// The version this build writes.
    static let currentVersion: Int64 = 5

    /// The index a plan reads a device's history through (created by migration 4; a large
    /// ingest drops it and builds it again, ``Ingestor``).
    static let historyIndex = "event_log_device_time"
    static let createHistoryIndex = "CREATE INDEX IF NOT EXISTS event_log_device_time ON event_log(device_id, time_us)"

    /// The statements that bring a store from version `index` to `index + 1`.
    static let migrations: [String] = [
        // 0 → 1: events, names, files, per-file aggregates, model state, the events view.
        """
        CREATE TABLE devices(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
        CREATE TABLE apps(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
        CREATE TABLE files(
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL,
            sha256 TEXT NOT NULL UNIQUE,
            format TEXT NOT NULL,
            gzip INTEGER NOT NULL,
            size_bytes INTEGER NOT NULL,
            rows INTEGER NOT NULL,
            rejected INTEGER NOT NULL,
            first_event_id INTEGER,
            last_event_id INTEGER,
            ingested_at TEXT NOT NULL
        );
        CREATE TABLE event_log(
            id INTEGER PRIMARY KEY,
            file_id INTEGER NOT NULL,
            line INTEGER NOT NULL,
            time_us INTEGER NOT NULL,
            utc_offset_s INTEGER NOT NULL,
            device_id INTEGER,
            app_id INTEGER NOT NULL,
            kind INTEGER NOT NULL,
            result INTEGER,
            bytes INTEGER,
            duration_ms INTEGER
        );
        CREATE TABLE file_counts(
            file_id INTEGER NOT NULL,
            device_id INTEGER,
            app_id INTEGER NOT NULL,
            kind INTEGER NOT NULL,
            n INTEGER NOT NULL,
            first_us INTEGER NOT NULL,
            last_us INTEGER NOT NULL
        );
        CREATE INDEX file_counts_file ON file_counts(file_id);
        CREATE TABLE file_days(
            file_id INTEGER NOT NULL,
            device_id INTEGER NOT NULL,
            day INTEGER NOT NULL,
            launches INTEGER NOT NULL
        );
        CREATE INDEX file_days_file ON file_days(file_id);
        CREATE TABLE model_state(
            key TEXT PRIMARY KEY,
            watermark INTEGER NOT NULL,
            state BLOB NOT NULL
        );
        CREATE VIEW events AS
        SELECT
            CASE WHEN e.time_us >= 0 THEN e.time_us / 1000000 ELSE (e.time_us - 999999) / 1000000 END AS time_utc,
            e.utc_offset_s AS utc_offset_s,
            COALESCE(d.name, '') AS device,
            a.name AS app,
            CASE e.kind WHEN 0 THEN 'launch' WHEN 1 THEN 'fetch' ELSE 'publish' END AS event,
            CASE e.result WHEN 0 THEN 'newData' WHEN 1 THEN 'noData' WHEN 2 THEN 'failed' END AS result,
            e.bytes AS bytes,
            e.duration_ms AS duration_ms,
            e.time_us AS time_us,
            e.file_id AS file_id,
            e.line AS line
        FROM event_log e
        LEFT JOIN devices d ON d.id = e.device_id
        JOIN apps a ON a.id = e.app_id;
        """,
        // 1 → 2: device conditions. A `state` row (kind 3, the empty app) fills any of the four
        // new nullable columns; every other row leaves them NULL. The view gains them after its
        // v1 columns, and names kind 3 'state'. Codes: network 0 wifi, 1 cellular, 2 offline;
        // power 0 charging, 1 battery; battery 0–100; low_power 1 on, 0 off.
        """
        ALTER TABLE event_log ADD COLUMN network INTEGER;
        ALTER TABLE event_log ADD COLUMN power INTEGER;
        ALTER TABLE event_log ADD COLUMN battery INTEGER;
        ALTER TABLE event_log ADD COLUMN low_power INTEGER;
        DROP VIEW events;
        CREATE VIEW events AS
        SELECT
            CASE WHEN e.time_us >= 0 THEN e.time_us / 1000000 ELSE (e.time_us - 999999) / 1000000 END AS time_utc,
            e.utc_offset_s AS utc_offset_s,
            COALESCE(d.name, '') AS device,
            a.name AS app,
            CASE e.kind WHEN 0 THEN 'launch' WHEN 1 THEN 'fetch' WHEN 2 THEN 'publish' ELSE 'state' END AS event,
            CASE e.result WHEN 0 THEN 'newData' WHEN 1 THEN 'noData' WHEN 2 THEN 'failed' END AS result,
            e.bytes AS bytes,
            e.duration_ms AS duration_ms,
            e.time_us AS time_us,
            e.file_id AS file_id,
            e.line AS line,
            CASE e.network WHEN 0 THEN 'wifi' WHEN 1 THEN 'cellular' WHEN 2 THEN 'offline' END AS network,
            CASE e.power WHEN 0 THEN 'charging' WHEN 1 THEN 'battery' END AS power,
            e.battery AS battery,
            CASE e.low_power WHEN 1 THEN 'on' WHEN 0 THEN 'off' END AS low_power
        FROM event_log e
        LEFT JOIN devices d ON d.id = e.device_id
        JOIN apps a ON a.id = e.app_id;
        """,
        // 2 → 3: a device's `state` rows by time (a plan reads them to learn when the device is
        // usually on Wi-Fi and charging): a partial index, so other rows cost ingest nothing.
        """
        CREATE INDEX event_log_states ON event_log(device_id, time_us) WHERE kind = 3;
        """,
        // 3 → 4: a device's whole history by time (every plan is made from a scheduler told of
        // the device's events before the plan's start, in time order); it covers the `state`
        // rows' partial index.
        """
        DROP INDEX event_log_states;
        CREATE INDEX event_log_device_time ON event_log(device_id, time_us);
        """,
        // 4 → 5: a device's per-file aggregates (a page of `GET /v1/devices` walks the devices
        // in name order and reads only theirs: O(page), not a scan of every file's counts).
        """
        CREATE INDEX file_counts_device ON file_counts(device_id);
        """,
    ]
}
