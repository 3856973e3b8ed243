import FetchCastPostgres
import FetchCastStore
import FetchCastTestSupport
import FetchCastTrace
import Testing

/// An append of a file longer than one parser batch (16,384 rows), whose names first appear in
/// later batches: every row and every name is stored once, on every engine.
@Suite("Event log appends across batches (every engine)")
struct EventLogBatchConformanceTests {
    /// 40,000 launches over 7 devices, then, from row 30,000, three devices and one app first
    /// seen there (the app named like a device), and a publish to every device.
    private var trace: String {
        var text = generatedTrace(rows: 30_000)
        for i in 0..<10_000 {
            let app = i % 2 == 0 ? "dev0" : "app\(i % 5)"
            text += "\(1_800_000_000 + 60 * i),late\(i % 3),\(app),launch,,,,,,,\n"
        }
        text += "1800700000,,news,publish,,,,,,,\n"
        return text
    }

    @Test(arguments: Engine.available)
    func namesFirstSeenInLaterBatchesAreStored(engine: Engine) async throws {
        try await LogUnderTest.with(engine) { under, directory in
            let log = try await under.open()
            let result = try await log.append(path: try directory.write("long.csv", trace), name: nil, options: fixedOptions())
            #expect(result.events == 40_001)
            #expect(try await log.sortedDeviceNames() == (0..<7).map { "dev\($0)" } + ["late0", "late1", "late2"])
            #expect(try await log.sortedAppNames() == (0..<5).map { "app\($0)" } + ["dev0", "news"])
            let stats = try await log.stats()
            #expect(stats.events == 40_001)
            #expect(stats.launches == 40_000)
            #expect(stats.publishes == 1)
            #expect(stats.devices == 10)
            let devices = try await log.devices(top: 1)
            #expect(devices.map(\.events) == [4_286, 4_286, 4_286, 4_286, 4_286, 4_285, 4_285, 3_334, 3_333, 3_333])
            #expect(devices[7].topApps == [.init(app: "dev0", launches: 1_667)])
            if let database = under.database {
                // Each row once: its file and line are its identity.
                #expect(try await database.strings("SELECT count(DISTINCT (file_id, line))::text FROM event_log") == ["40001"])
                #expect(try await database.strings("SELECT min(line)::text || '-' || max(line)::text FROM event_log") == ["2-40002"])
            }
            await log.close()
        }
    }

    /// The rows of a parser batch reach the server ordered by device (then line), so that
    /// consecutive inserts fall on the same leaf pages of `event_log`'s B-trees: in each
    /// partition of a fresh table, rows stored one after another within one batch never go
    /// down in device id.
    @Test(.enabled(if: PostgresTestDatabase.adminURL != nil, Comment(rawValue: PostgresTestDatabase.skipReason)))
    func aBatchIsSentDeviceByDevice() async throws {
        try await LogUnderTest.with(.postgres) { under, directory in
            let log = try await under.open()
            _ = try await log.append(path: try directory.write("many.csv", generatedTrace(rows: 20_000, devices: 40)), name: nil,
                                     options: fixedOptions())
            let pairs = try await under.database!.strings("""
                SELECT count(*) FILTER (WHERE device_id < previous)::text || ' ' || count(*) FILTER (WHERE device_id > previous)::text
                FROM (SELECT device_id, (line - 2) / 16384 AS batch,
                             lag(device_id) OVER w AS previous, lag((line - 2) / 16384) OVER w AS previous_batch
                      FROM event_log WINDOW w AS (PARTITION BY tableoid ORDER BY ctid)) r
                WHERE batch = previous_batch
                """)
            // No step down; steps up, so the test sees more than one device per partition.
            let counts = pairs.first?.split(separator: " ").compactMap { Int($0) } ?? []
            #expect(counts.count == 2 && counts[0] == 0 && counts[1] > 8)
            await log.close()
        }
    }
}
