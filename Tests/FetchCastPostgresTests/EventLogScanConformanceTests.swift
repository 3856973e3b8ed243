import FetchCastCore
import FetchCastStore
import FetchCastTestSupport
import FetchCastTrace
import Testing

/// One event as a time-ordered scan hands it out, with its names (not the symbols, which may
/// be numbered differently) and its file.
private struct Scanned: Hashable, CustomStringConvertible {
    var time: Int64
    var offset: Int32
    var device: [UInt8]  // bytes: Swift's `==` would merge names that only look alike
    var app: [UInt8]
    var kind: EventKind
    var result: FetchResult?
    var line: Int64
    var conditions: ConditionChange
    var file: String

    var description: String {
        "\(time) \(String(decoding: device, as: UTF8.self))/\(String(decoding: app, as: UTF8.self)) \(kind) line \(line) of \(file)"
    }
}

/// A scan's whole output.
private func scanAll(_ log: any EventLogScanner, devices: DeviceIDs? = nil) async throws -> (files: [TimeOrderedScan.File], events: [Scanned]) {
    let symbols = SymbolTable()
    var files: [TimeOrderedScan.File] = []
    var events: [Scanned] = []
    try await log.scanTimeOrdered(symbols: symbols, devices: devices, files: { files = $0 }) { batch, file in
        for e in batch {
            events.append(Scanned(
                time: e.timeMicros, offset: e.utcOffsetSeconds,
                device: e.device == EncodedEvent.everyDevice ? [] : Array(symbols.name(e.device).utf8),
                app: Array(symbols.name(e.app).utf8), kind: e.kind, result: e.result, line: e.line,
                conditions: e.conditions, file: file))
        }
    }
    return (files, events)
}

/// A row scan's output, each row as the bytes of its description (names compared byte for byte).
private func rows(_ log: any EventLogScanner, _ filter: EventFilter) async throws -> [[UInt8]] {
    var out: [[UInt8]] = []
    try await log.scanEventRows(filter) { out.append(Array(String(describing: $0).utf8)) }
    return out
}

/// Rows of two files: several events at one instant (within a file and across the two),
/// rows out of time order, names that only look alike (case, Unicode normalisation, a trailing
/// space), a publish to every device, a fetch with a result and a `state` row.
private let sameInstant = 1_700_000_000
private let firstFile: [(second: Int, device: String, app: String, rest: String)] = [
    (sameInstant, "caf\u{E9}", "news", "launch,,,,,,,"),
    (sameInstant, "cafe\u{301}", "news", "launch,,,,,,,"),
    (sameInstant - 60, "Alice", "mail", "fetch,newData,100,20,,,,"),
    (sameInstant, "", "news", "publish,,,,,,,"),
    (sameInstant, "alice", "Mail", "launch,,,,,,,"),
    (sameInstant - 120, "Alice", "", "state,,,,wifi,charging,80,off"),
    (sameInstant + 1, "bob", "news", "fetch,noData,,,,,,"),
]
private let secondFile: [(second: Int, device: String, app: String, rest: String)] = [
    (sameInstant, "Alice", "news", "launch,,,,,,,"),
    (sameInstant - 60, "bob ", "news", "launch,,,,,,,"),
    (sameInstant, "caf\u{E9}", "mail", "launch,,,,,,,"),
]

private func traceText(_ rows: [(second: Int, device: String, app: String, rest: String)]) -> String {
    header + rows.map { "\($0.second),\($0.device),\($0.app),\($0.rest)\n" }.joined()
}

@Suite("Event log scans (every engine)")
struct EventLogScanConformanceTests {
    /// Ingests both files into the log under test and into a reference SQLite store.
    private func ingest(_ under: LogUnderTest, _ directory: TemporaryDirectory) async throws -> (log: any EventLogWriter & EventLogScanner, reference: Store) {
        let log = try #require(try await under.open() as? any EventLogWriter & EventLogScanner)
        let reference = try Store(path: directory.path + "/reference.sqlite", create: true)
        for (name, rows) in [("a.csv", firstFile), ("b.csv", secondFile)] {
            let path = try directory.write(name, traceText(rows))
            _ = try await log.append(path: path, name: name, options: fixedOptions())
            _ = try reference.append(path: path, name: name, options: fixedOptions())
        }
        return (log, reference)
    }

    @Test(arguments: Engine.available)
    func timeOrderedScanIsTimeThenFileThenLine(engine: Engine) async throws {
        try await LogUnderTest.with(engine) { under, directory in
            let (log, reference) = try await ingest(under, directory)
            let (files, events) = try await scanAll(log)
            #expect(files.map(\.name) == ["a.csv", "b.csv"])
            #expect(files.map(\.rows) == [7, 3])
            // The expected order, from the rows themselves: time, then file, then line.
            let expected = (firstFile.enumerated().map { (file: "a.csv", index: $0.offset, row: $0.element) }
                + secondFile.enumerated().map { (file: "b.csv", index: $0.offset, row: $0.element) })
                .sorted { ($0.row.second, $0.file, $0.index) < ($1.row.second, $1.file, $1.index) }
            #expect(events.map(\.file) == expected.map(\.file))
            #expect(events.map(\.line) == expected.map { Int64($0.index + 2) })  // line 1 is the header
            #expect(events.map(\.device) == expected.map { Array($0.row.device.utf8) })
            #expect(events.map(\.app) == expected.map { Array($0.row.app.utf8) })
            #expect(events.map(\.time) == expected.map { Int64($0.row.second) * 1_000_000 })
            let state = try #require(events.first { $0.kind == .state })
            #expect(state.conditions == ConditionChange(network: .wifi, power: .charging, battery: 80, lowPower: false))
            #expect(events.filter { $0.kind == .fetch }.map(\.result) == [.newData, .noData])
            // The same as the SQLite store's own (time, id) scan of the same files.
            #expect(events == (try await scanAll(reference).events))
            await log.close()
        }
    }

    /// Only the devices asked for (byte for byte: `café` precomposed is not `café` decomposed)
    /// and the publishes to every device.
    @Test(arguments: Engine.available)
    func timeOrderedScanOfSomeDevices(engine: Engine) async throws {
        try await LogUnderTest.with(engine) { under, directory in
            let (log, reference) = try await ingest(under, directory)
            let devices: DeviceIDs = ["cafe\u{301}", "bob "]
            let (files, events) = try await scanAll(log, devices: devices)
            #expect(files.count == 2)
            #expect(Set(events.map(\.device)) == [Array("cafe\u{301}".utf8), Array("bob ".utf8), []])
            #expect(events.count == 3)
            #expect(events == (try await scanAll(reference, devices: devices).events))
            #expect(try await scanAll(log, devices: []).events.map(\.kind) == [.publish])
            await log.close()
        }
    }

    @Test(arguments: Engine.available)
    func rowScanMatchesTheSQLiteStore(engine: Engine) async throws {
        try await LogUnderTest.with(engine) { under, directory in
            let (log, reference) = try await ingest(under, directory)
            #expect(try await log.hasStateRows())
            let filters = [
                EventFilter(), EventFilter(device: "caf\u{E9}"), EventFilter(device: "cafe\u{301}"), EventFilter(device: ""),
                EventFilter(device: "bob "), EventFilter(app: "Mail"), EventFilter(app: ""),
                EventFilter(fromMicros: Int64(sameInstant) * 1_000_000, toMicros: Int64(sameInstant + 1) * 1_000_000),
                EventFilter(device: "Alice", app: "news", fromMicros: Int64(sameInstant) * 1_000_000),
                EventFilter(device: "nobody"),
            ]
            for filter in filters {
                #expect(try await rows(log, filter) == (try await rows(reference, filter)), "\(filter)")
            }
            let all = try await rows(log, EventFilter())
            #expect(all.count == 10)
            #expect(try await rows(log, EventFilter(device: "caf\u{E9}")).count == 2)
            #expect(try await rows(log, EventFilter(device: "cafe\u{301}")).count == 1)
            await log.close()
        }
    }

    @Test(arguments: Engine.available)
    func aLogWithoutStateRowsSaysSo(engine: Engine) async throws {
        try await LogUnderTest.with(engine) { under, directory in
            let log = try #require(try await under.open() as? any EventLogWriter & EventLogScanner)
            #expect(try await log.hasStateRows() == false)
            _ = try await log.append(path: try directory.write("g.csv", generatedTrace(rows: 20)), name: nil, options: fixedOptions())
            #expect(try await log.hasStateRows() == false)
            #expect(try await scanAll(log).events.count == 20)
            await log.close()
        }
    }

    /// More events than one batch (8192), over more than one file: every one, in order, each
    /// batch from one file.
    @Test(arguments: Engine.available)
    func aLongScanComesInOrder(engine: Engine) async throws {
        try await LogUnderTest.with(engine) { under, directory in
            let log = try #require(try await under.open() as? any EventLogWriter & EventLogScanner)
            _ = try await log.append(path: try directory.write("x.csv", generatedTrace(rows: 10_000)), name: "x", options: fixedOptions())
            _ = try await log.append(
                path: try directory.write("y.csv", generatedTrace(rows: 5_000, firstSecond: 1_700_000_030, tag: "y")), name: "y",
                options: fixedOptions())
            let (_, events) = try await scanAll(log)
            #expect(events.count == 15_000)
            #expect(zip(events, events.dropFirst()).allSatisfy { ($0.time, $0.file, $0.line) < ($1.time, $1.file, $1.line) })
            var rowCount = 0
            var last: Int64 = .min
            try await log.scanEventRows(EventFilter()) { row in
                #expect(row.timeMicros >= last)
                last = row.timeMicros
                rowCount += 1
            }
            #expect(rowCount == 15_000)
            await log.close()
        }
    }
}
