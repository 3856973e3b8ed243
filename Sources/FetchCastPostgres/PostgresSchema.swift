/// The PostgreSQL event log's tables and the migrations between its schema versions.
///
/// The version is the `schema_version` row of `fetchcast_meta`. Migrations run once, in order,
/// in the transaction that opens the database for writing, under an advisory lock, so two
/// processes that open a new database at the same moment cannot both create it.
///
/// Laid out for sharding by device (Citus `create_distributed_table(…, 'device_id')`): every
/// device-keyed table (`devices`, `event_log`, `file_counts`, `file_days`, `device_state`) has
/// `device_id` as the first column of its primary key and no unique constraint without it, so
/// the five colocate; `apps`, `files` and `model_state` (the fleet's states) are small and every
/// shard needs them (reference tables).
/// `event_log` is hash-partitioned by `device_id` (declarative partitioning, 8 partitions).
/// Device and app ids are 63-bit hashes of their names (``NameID``), so no shared counter
/// hands them out; device id 0 stands for "every device" (a publish).
enum PostgresSchema {
    /// The version this build writes.
    static let currentVersion: Int64 = 4

    /// The oldest version a reader (`stats`, `devices`, `evaluate`) reads without an upgrade:
    /// version 3 changed only how model state is compressed, version 4 only where it is kept
    /// (readers read none).
    static let oldestReadable: Int64 = 2

    /// Partitions of `event_log`.
    static let partitions = 8

    /// The statements that bring a database from version `index` to `index + 1`, one
    /// statement each (the extended protocol runs one at a time).
    static let migrations: [[String]] = [
        // 0 → 1: names, files, events, per-file aggregates, the `events` view.
        [
            "CREATE TABLE fetchcast_meta(key text COLLATE \"C\" PRIMARY KEY, value bigint NOT NULL)",
            "CREATE TABLE devices(device_id bigint PRIMARY KEY, name text COLLATE \"C\" NOT NULL)",
            "CREATE INDEX devices_name ON devices(name)",
            "CREATE TABLE apps(app_id bigint PRIMARY KEY, name text COLLATE \"C\" NOT NULL UNIQUE)",
            "CREATE SEQUENCE file_ids",
            """
            CREATE TABLE files(
                file_id bigint PRIMARY KEY,
                name text NOT NULL,
                sha256 text COLLATE "C" NOT NULL UNIQUE,
                format text NOT NULL,
                gzip boolean NOT NULL,
                size_bytes bigint NOT NULL,
                rows bigint NOT NULL,
                rejected bigint NOT NULL,
                ingested_at text NOT NULL)
            """,
            "CREATE INDEX files_size ON files(size_bytes)",
            """
            CREATE TABLE event_log(
                device_id bigint NOT NULL,
                file_id bigint NOT NULL,
                line bigint NOT NULL,
                time_us bigint NOT NULL,
                utc_offset_s integer NOT NULL,
                app_id bigint NOT NULL,
                kind smallint NOT NULL,
                result smallint,
                bytes bigint,
                duration_ms bigint,
                network smallint,
                power smallint,
                battery smallint,
                low_power smallint,
                PRIMARY KEY (device_id, file_id, line)
            ) PARTITION BY HASH (device_id)
            """,
        ] + (0..<partitions).map {
            "CREATE TABLE event_log_p\($0) PARTITION OF event_log FOR VALUES WITH (MODULUS \(partitions), REMAINDER \($0))"
        } + [
            "CREATE INDEX event_log_device_time ON event_log(device_id, time_us)",
            """
            CREATE TABLE file_counts(
                device_id bigint NOT NULL,
                file_id bigint NOT NULL,
                app_id bigint NOT NULL,
                kind smallint NOT NULL,
                n bigint NOT NULL,
                first_us bigint NOT NULL,
                last_us bigint NOT NULL,
                PRIMARY KEY (device_id, file_id, app_id, kind))
            """,
            "CREATE INDEX file_counts_file ON file_counts(file_id)",
            """
            CREATE TABLE file_days(
                device_id bigint NOT NULL,
                file_id bigint NOT NULL,
                day integer NOT NULL,
                launches bigint NOT NULL,
                PRIMARY KEY (device_id, file_id, day))
            """,
            """
            CREATE VIEW events AS
            SELECT
                floor(e.time_us / 1000000.0)::bigint AS time_utc,
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
            LEFT JOIN devices d ON d.device_id = e.device_id
            JOIN apps a ON a.app_id = e.app_id
            """,
        ],
        // 1 → 2: what the model layer needs (``PostgresModelStore``): the model state; device
        // and app numbers (`seq`) dense in the order their first event was ingested, as SQLite's
        // rowids are; each file's first event number (`first_event`: the events of the files
        // before it), so that events are numbered in ingest order as on SQLite.
        [
            "CREATE TABLE model_state(key text COLLATE \"C\" PRIMARY KEY, watermark bigint NOT NULL, state bytea NOT NULL)",
            "ALTER TABLE devices ADD COLUMN seq bigint",
            "ALTER TABLE apps ADD COLUMN seq bigint",
            "ALTER TABLE files ADD COLUMN first_event bigint",
            """
            UPDATE devices d SET seq = f.n FROM (
                SELECT device_id, row_number() OVER (ORDER BY file_id, line) AS n FROM (
                    SELECT DISTINCT ON (device_id) device_id, file_id, line FROM event_log WHERE device_id <> 0
                    ORDER BY device_id, file_id, line) firsts) f
            WHERE d.device_id = f.device_id
            """,
            """
            UPDATE apps a SET seq = f.n FROM (
                SELECT app_id, row_number() OVER (ORDER BY file_id, line) AS n FROM (
                    SELECT DISTINCT ON (app_id) app_id, file_id, line FROM event_log ORDER BY app_id, file_id, line) firsts) f
            WHERE a.app_id = f.app_id
            """,
            "CREATE SEQUENCE device_seqs",
            "CREATE SEQUENCE app_seqs",
            "SELECT setval('device_seqs', (SELECT COALESCE(max(seq), 0) + 1 FROM devices), false)",
            "SELECT setval('app_seqs', (SELECT COALESCE(max(seq), 0) + 1 FROM apps), false)",
            "UPDATE devices SET seq = nextval('device_seqs') WHERE seq IS NULL",
            "UPDATE apps SET seq = nextval('app_seqs') WHERE seq IS NULL",
            "ALTER TABLE devices ALTER COLUMN seq SET NOT NULL",
            "ALTER TABLE apps ALTER COLUMN seq SET NOT NULL",
            "CREATE INDEX devices_seq ON devices(seq)",
            "CREATE UNIQUE INDEX apps_seq ON apps(seq)",
            """
            UPDATE files f SET first_event = b.first FROM (
                SELECT file_id, COALESCE(sum(rows) OVER (ORDER BY file_id ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS first
                FROM files) b
            WHERE f.file_id = b.file_id
            """,
            "ALTER TABLE files ALTER COLUMN first_event SET NOT NULL",
            "CREATE INDEX files_first_event ON files(first_event)",
        ],
        // 2 → 3: model state compressed with LZ4 instead of pglz, where the server has it: a
        // warm-up writes a caught-up scheduler and a plan table a device, and pglz took 90% of
        // the server's time for those writes (2,014 devices: 2.5 s against 0.25 s). Rows
        // written before keep pglz until rewritten. A server built without LZ4 keeps pglz.
        [
            """
            DO $$ BEGIN
                ALTER TABLE model_state ALTER COLUMN state SET COMPRESSION lz4;
            EXCEPTION WHEN feature_not_supported THEN NULL;
            END $$
            """,
        ],
        // 3 → 4: a device's model state (``DeviceStateKey``: `device:3`, `scheduler:3:…`,
        // `plans:3:…`) in `device_state`, keyed by the device's `device_id` as its events are, so
        // that Citus shards it with them (a warm-up writes about 100 KB a device); the fleet's
        // states stay in `model_state`. The rows move; one of a device the database does not
        // hold (none is written so) is dropped, as state that could only be read again by
        // rebuilding it.
        [
            """
            CREATE TABLE device_state(
                device_id bigint NOT NULL,
                key text COLLATE "C" NOT NULL,
                watermark bigint NOT NULL,
                state bytea NOT NULL,
                PRIMARY KEY (device_id, key))
            """,
            """
            DO $$ BEGIN
                ALTER TABLE device_state ALTER COLUMN state SET COMPRESSION lz4;
            EXCEPTION WHEN feature_not_supported THEN NULL;
            END $$
            """,
            "CREATE INDEX device_state_key ON device_state(key)",
            """
            INSERT INTO device_state(device_id, key, watermark, state)
            SELECT d.device_id, m.key, m.watermark, m.state
            FROM model_state m JOIN devices d ON d.seq = substring(m.key FROM '^[^:]+:([1-9][0-9]{0,17})(:|$)')::bigint
            WHERE m.key ~ '^[^:]+:[1-9][0-9]{0,17}(:|$)'
            """,
            "DELETE FROM model_state WHERE key ~ '^[^:]+:[1-9][0-9]{0,17}(:|$)'",
        ],
    ]

    /// The advisory lock key a migration holds ('FCSCHEMA').
    static let migrationLock: Int64 = 0x4643_5343_4845_4D41
    /// The advisory lock key a model write transaction holds ('FCMODEL'), from before its
    /// snapshot to after its commit: folds and saved states take turns across processes, as
    /// SQLite's write lock makes them.
    static let modelLock: Int64 = 0x0046_434D_4F44_454C
    /// The advisory lock key a warm-up pass holds for its session ('FCWARMUP'): one process
    /// warms at a time, the others wait and then find the devices current.
    static let warmUpLock: Int64 = 0x4643_5741_524D_5550
    /// The advisory lock key an append holds to its commit ('FCAPPEND'): appends to one
    /// database run one at a time, as SQLite's do.
    static let appendLock: Int64 = 0x4643_4150_5045_4E44
}
