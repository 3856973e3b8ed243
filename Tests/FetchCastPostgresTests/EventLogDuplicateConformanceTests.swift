import FetchCastStore
import FetchCastTestSupport
import FetchCastTrace
import Testing

/// Rows whose events the log already holds from an earlier file are skipped and counted, by the
/// same rule on every engine (each stored event stands for one row of a later file; rows of the
/// file itself never count as stored), unless kept.
@Suite("Event log duplicate rows (every engine)")
struct EventLogDuplicateConformanceTests {
    /// `mixedTrace`'s six rows written otherwise (Unix seconds, UTC for a time written at +02:00,
    /// other order), the first of them
    /// twice, a `state` row that differs only in its battery, and one new launch.
    private static let overlapping = header + """
        1704096000,d1,news,launch,,,,,,,
        2024-01-01T11:00:00Z,d2,,state,,,,wifi,charging,80,off
        2024-01-01T08:05:00Z,d1,mail,launch,,,,,,,
        2024-01-02T07:00:00Z,d1,news,launch,,,,,,,
        2024-01-01T08:10:00Z,d2,news,fetch,newData,100,20,,,,
        2024-01-01T10:00:00Z,,news,publish,,,,,,,
        1704096000,d1,news,launch,,,,,,,
        2024-01-01T11:00:00Z,d2,,state,,,,wifi,charging,81,off
        2024-01-03T08:00:00Z,d1,news,launch,,,,,,,

        """

    @Test(arguments: Engine.available)
    func rowsAlreadyStoredAreSkippedAndCounted(engine: Engine) async throws {
        try await LogUnderTest.with(engine) { under, directory in
            let log = try await under.open()
            #expect(try await log.append(path: try directory.write("a.csv", mixedTrace), name: nil, options: fixedOptions()).events == 6)
            let second = try await log.append(path: try directory.write("b.csv", Self.overlapping), name: nil, options: fixedOptions())
            #expect(second.status == .ingested)
            #expect(second.duplicates == 6, "each of the six stored events stands for one row")
            #expect(second.events == 3, "the repeated launch's second row, the other battery, the new launch")
            let stats = try await log.stats()
            #expect(stats.events == 9 && stats.launches == 5 && stats.publishes == 1)

            // Every row stored already (the added ones included, from an earlier file now): the
            // file is recorded, so the same bytes again are known at once.
            let again = try directory.write("c.csv", Self.overlapping.replacing("2024-01-03T08:00:00Z", with: "1704268800"))
            let third = try await log.append(path: again, name: nil, options: fixedOptions())
            #expect(third.status == .ingested && third.events == 0 && third.duplicates == 9)
            #expect(try await log.fileCount() == 3)
            #expect(try await log.append(path: again, name: nil, options: fixedOptions()).status == .alreadyIngested)

            // Kept when asked.
            var keep = fixedOptions()
            keep.keepsDuplicates = true
            let kept = try await log.append(path: try directory.write("d.csv", mixedTrace.replacing("2024-01-01T08:05:00Z", with: "1704096300")), name: nil, options: keep)
            #expect(kept.events == 6 && kept.duplicates == 0)
            #expect(try await log.stats().events == 15)
            await log.close()
        }
    }

    /// A file longer than one parser batch whose first 20,000 rows are stored: each batch is
    /// looked up, none of its rows counts twice, none of the new ones is dropped.
    @Test(arguments: Engine.available)
    func duplicatesAcrossBatches(engine: Engine) async throws {
        try await LogUnderTest.with(engine) { under, directory in
            let log = try await under.open()
            _ = try await log.append(path: try directory.write("a.csv", generatedTrace(rows: 20_000)), name: nil, options: fixedOptions())
            let longer = try await log.append(
                path: try directory.write("b.csv", generatedTrace(rows: 40_000)), name: nil, options: fixedOptions())
            #expect(longer.duplicates == 20_000 && longer.events == 20_000)
            #expect(try await log.stats().events == 40_000)
            let devices = try await log.devices(top: 1)
            #expect(devices.map(\.events).reduce(0, +) == 40_000)
            await log.close()
        }
    }
}
