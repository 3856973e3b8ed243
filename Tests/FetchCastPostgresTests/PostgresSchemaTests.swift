import FetchCastPostgres
import FetchCastStore
import FetchCastTestSupport
import Testing

/// The PostgreSQL schema's version checks (skipped without a server).
@Suite(.enabled(if: PostgresTestDatabase.adminURL != nil, Comment(rawValue: PostgresTestDatabase.skipReason)))
struct PostgresSchemaTests {
    @Test func aNewerSchemaIsRefusedClearly() async throws {
        let database = try await PostgresTestDatabase.create()
        await (try await PostgresEventLog.open(database.location, create: true)).close()
        try await database.execute("UPDATE fetchcast_meta SET value = 99 WHERE key = 'schema_version'")
        for create in [true, false] {
            await #expect {
                _ = try await PostgresEventLog.open(database.location, create: create)
            } throws: { error in
                String(describing: error).contains("schema version 99, newer than this fetchcast (4); upgrade fetchcast")
            }
        }
        await database.drop()
    }

    /// Version 3 only compresses model state with LZ4: a reader reads a version 2 database as it
    /// is, a writer upgrades it.
    @Test func aVersionTwoDatabaseIsReadAsItIsAndUpgradedByAWriter() async throws {
        let database = try await PostgresTestDatabase.create()
        await (try await PostgresEventLog.open(database.location, create: true)).close()
        let compression = "SELECT attcompression::text FROM pg_attribute WHERE attrelid = 'model_state'::regclass AND attname = 'state'"
        #expect(try await database.strings(compression) == ["l"], "this server has LZ4")
        try await database.execute("ALTER TABLE model_state ALTER COLUMN state SET COMPRESSION pglz")
        try await database.execute("DROP TABLE device_state")
        try await database.execute("UPDATE fetchcast_meta SET value = 2 WHERE key = 'schema_version'")
        await (try await PostgresEventLog.open(database.location, create: false)).close()
        #expect(try await database.strings("SELECT value::text FROM fetchcast_meta WHERE key = 'schema_version'") == ["2"])
        #expect(try await database.strings(compression) == ["p"])
        await (try await PostgresEventLog.open(database.location, create: false, upgrade: true)).close()
        #expect(try await database.strings("SELECT value::text FROM fetchcast_meta WHERE key = 'schema_version'") == ["4"])
        #expect(try await database.strings(compression) == ["l"])
        // Version 1 is still refused to a reader.
        try await database.execute("UPDATE fetchcast_meta SET value = 1 WHERE key = 'schema_version'")
        await #expect {
            _ = try await PostgresEventLog.open(database.location, create: false)
        } throws: { error in
            String(describing: error).contains("schema version 1, older than this fetchcast (4)")
        }
        await database.drop()
    }

    @Test func aReaderDoesNotCreateTablesAndSaysHowTo() async throws {
        let database = try await PostgresTestDatabase.create()
        await #expect {
            _ = try await PostgresEventLog.open(database.location, create: false)
        } throws: { error in
            String(describing: error).contains("no FetchCast store in this database")
        }
        #expect(try await database.strings("SELECT count(*)::text FROM pg_tables WHERE schemaname = 'public'") == ["0"])
        await database.drop()
    }

    @Test func aForeignDatabaseIsLeftAlone() async throws {
        let database = try await PostgresTestDatabase.create()
        try await database.execute("CREATE TABLE customers(id int)")
        await #expect {
            _ = try await PostgresEventLog.open(database.location, create: true)
        } throws: { error in
            String(describing: error).contains("has tables but is not a FetchCast store")
        }
        #expect(try await database.strings("SELECT tablename::text FROM pg_tables WHERE schemaname = 'public'") == ["customers"])
        await database.drop()
    }

    /// The layout a Citus `create_distributed_table(…, 'device_id')` colocates: every
    /// device-keyed table's primary key starts with device_id, and event_log is hash-partitioned.
    @Test func deviceKeyedTablesAreKeyedByDevice() async throws {
        let database = try await PostgresTestDatabase.create()
        await (try await PostgresEventLog.open(database.location, create: true)).close()
        let keys = try await database.strings("""
            SELECT c.relname || ':' || a.attname FROM pg_index i
            JOIN pg_class c ON c.oid = i.indrelid JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = i.indkey[0]
            WHERE i.indisprimary AND c.relname IN ('devices', 'event_log', 'file_counts', 'file_days', 'device_state') ORDER BY 1
            """)
        #expect(keys == ["device_state:device_id", "devices:device_id", "event_log:device_id", "file_counts:device_id", "file_days:device_id"])
        let strategy = try await database.strings("SELECT partstrat::text FROM pg_partitioned_table p JOIN pg_class c ON c.oid = p.partrelid WHERE c.relname = 'event_log'")
        #expect(strategy == ["h"])
        await database.drop()
    }
}
