import FetchCastCore
import FetchCastPostgres
import FetchCastStore
import FetchCastTestSupport
import Testing

/// Two files: names that only look alike, a publish to every device, a `state` row, events out
/// of time order, and names first seen in an order that is not their byte order.
private let first = header + """
    1700000000,zed,news,launch,,,,,,,
    1700000000,caf\u{E9},mail,launch,,,,,,,
    1699999940,cafe\u{301},news,fetch,newData,100,20,,,,
    1700000000,,news,publish,,,,,,,
    1699999880,zed,,state,,,,wifi,charging,80,off
    1700000060,Alice,chat,fetch,noData,,,,,,

    """
private let second = header + """
    1700000100,bob,news,launch,,,,,,,
    1700000030,zed,chat,launch,,,,,,,
    1700000100,,mail,publish,,,,,,,
    1700000100,caf\u{E9},news,launch,,,,,,,

    """

/// A third file: one device's event, no publish.
private let third = header + """
    1700000200,Alice,news,launch,,,,,,,

    """

/// An event as the model layer reads it, without the engine's own numbering of the event.
private struct Read: Hashable {
    var time: Int64, offset: Int32, device: Int64?, app: Int64, kind: EventKind, result: FetchResult?, conditions: ConditionChange
}

private func read(_ e: EncodedEvent) -> Read {
    Read(time: e.timeMicros, offset: e.utcOffsetSeconds, device: e.device == EncodedEvent.everyDevice ? nil : Int64(e.device),
         app: Int64(e.app), kind: e.kind, result: e.result, conditions: e.conditions)
}

private func read(_ e: StoredEvent) -> Read {
    Read(time: e.timeMicros, offset: e.utcOffsetSeconds, device: e.device, app: e.app, kind: e.kind, result: e.result, conditions: e.conditions)
}

private func events(_ store: any ModelStore, after: Int64, devices: ClosedRange<Int64> = 1...1_000) async throws -> [Read] {
    try await store.readTransaction {
        var out: [Read] = []
        try await store.forEachEvent(afterID: after, devices: devices) { out += $0.map(read) }
        return out
    }
}

private func history(_ store: any ModelStore, of device: Int64) async throws -> [Read] {
    try await store.readTransaction {
        var out: [Read] = []
        try await store.deviceHistory(ofDevice: device, fromMicros: .min, beforeMicros: .max) { out.append(read($0)) }
        return out
    }
}

/// The model layer's store on every engine, against a reference SQLite store of the same files:
/// what the fold, the priors and the plans read must be the same numbers, so that `predict` and
/// `export` answer alike on both.
@Suite("Model stores (every engine)")
struct ModelStoreConformanceTests {
    /// Opens the model store of a log under test, runs `body` with it and closes it.
    private func withModelStore(_ under: LogUnderTest, _ body: (any ModelStore) async throws -> Void) async throws {
        switch under.engine {
        case .sqlite: try await body(try Store(path: under.location, create: false))
        case .postgres:
            let store = PostgresModelStore(log: try await PostgresEventLog.open(try PostgresLocation(url: under.location), create: false, upgrade: true))
            do {
                try await body(store)
            } catch {
                await store.log.close()
                throw error
            }
            await store.log.close()
        }
    }

    @Test(arguments: Engine.available)
    func namesAndEventNumbersFollowIngestOrder(engine: Engine) async throws {
        try await LogUnderTest.with(engine) { under, directory in
            let reference = try Store(path: directory.path + "/reference.sqlite", create: true)
            try await append(first, "a.csv", under, reference, directory)
            try await withModelStore(under) { store in
                #expect(try await store.lastEventID() == 6)
                try await append(second, "b.csv", under, reference, directory)
                #expect(try await store.lastEventID() == 10)
                // Numbered from 1 in the order of their first event, as SQLite's rowids.
                let devices = try await store.deviceNames(afterID: 0)
                #expect(devices.mapValues { Array($0.utf8) } == [1: Array("zed".utf8), 2: Array("caf\u{E9}".utf8), 3: Array("cafe\u{301}".utf8),
                                                                 4: Array("Alice".utf8), 5: Array("bob".utf8)])
                #expect(try await store.deviceNames(afterID: 0) == (try reference.deviceNames(afterID: 0)))
                #expect(try await store.deviceNames(afterID: 3) == (try reference.deviceNames(afterID: 3)))
                #expect(try await store.appNames(afterID: 0) == (try reference.appNames(afterID: 0)))
                #expect(try await store.appNames(afterID: 0)[1] == "news")
            }
        }
    }

    @Test(arguments: Engine.available)
    func whatChangedAfterAWatermark(engine: Engine) async throws {
        try await LogUnderTest.with(engine) { under, directory in
            let reference = try Store(path: directory.path + "/reference.sqlite", create: true)
            try await append(first, "a.csv", under, reference, directory)
            try await withModelStore(under) { store in
                let watermark = try await store.lastEventID()
                #expect(try await store.devicesWithEvents(afterID: watermark) == ([], false))
                #expect(try await events(store, after: watermark).isEmpty)
                try await append(second, "b.csv", under, reference, directory)
                let changed = try await store.devicesWithEvents(afterID: watermark)
                #expect(changed.devices == [1, 2, 5])
                #expect(changed.everyDevice)
                #expect(changed == (try reference.devicesWithEvents(afterID: watermark)))
                for device: Int64 in 1...5 {
                    for before: Int64 in [1_700_000_000_000_000, 1_700_000_031_000_000, .max] {
                        #expect(try await store.hasEvents(ofDevice: device, afterID: watermark, beforeMicros: before)
                                == (try reference.hasEvents(ofDevice: device, afterID: watermark, beforeMicros: before)),
                                "device \(device) before \(before)")
                    }
                    #expect(try await !store.hasEvents(ofDevice: device, afterID: try store.lastEventID(), beforeMicros: .max))
                }
                // The fold's read: ingest order, the publishes to every device in every batch of devices.
                #expect(try await events(store, after: watermark) == (try events(reference, after: watermark)))
                #expect(try await events(store, after: 0) == (try events(reference, after: 0)))
                #expect(try await events(store, after: 0, devices: 2...3) == (try events(reference, after: 0, devices: 2...3)))
                #expect(try await events(store, after: 0, devices: 2...3).filter { $0.device == nil }.count == 2)
                // A device's history: plain time order, ties in ingest order.
                for device: Int64 in 1...5 {
                    #expect(try await history(store, of: device) == (try history(reference, of: device)))
                }
                #expect(try await history(store, of: 1).first?.kind == .state)
            }
        }
    }

    @Test(arguments: Engine.available)
    func modelStateRoundTripsAndAFailedWriteLeavesItAsItWas(engine: Engine) async throws {
        try await LogUnderTest.with(engine) { under, directory in
            let reference = try Store(path: directory.path + "/reference.sqlite", create: true)
            try await append(first, "a.csv", under, reference, directory)
            try await withModelStore(under) { store in
                let records = [
                    ModelStateRecord(key: "device:1", watermark: 6, state: [0, 1, 2, 255]),
                    ModelStateRecord(key: "plan:1:a", watermark: 6, state: Array(repeating: 7, count: 100_000)),
                    ModelStateRecord(key: "plan:2:b", watermark: 5, state: []),
                    ModelStateRecord(key: "plan;", watermark: 4, state: [1]),
                ]
                try await store.writeTransaction { try await store.saveModelStates(records) }
                for r in records { #expect(try await store.modelState(key: r.key) == r) }
                if let database = under.database {
                    // A device's states beside its events, keyed by its device_id; the rest in model_state.
                    #expect(try await database.strings("SELECT d.name || ' ' || s.key FROM device_state s JOIN devices d USING (device_id) ORDER BY s.key")
                            == ["zed device:1", "zed plan:1:a", "caf\u{E9} plan:2:b"])
                    #expect(try await database.strings("SELECT key FROM model_state ORDER BY key") == ["plan;"])
                    // A state of a device the database does not hold has nowhere to go: refused,
                    // and nothing of its save is kept.
                    await #expect(throws: StoreError.self) {
                        try await store.writeTransaction {
                            try await store.saveModelStates([ModelStateRecord(key: "device:1", watermark: 9, state: [9]), ModelStateRecord(key: "device:99", watermark: 1, state: [])])
                        }
                    }
                    #expect(try await store.modelState(key: "device:1") == records[0])
                    #expect(try await store.modelState(key: "device:99") == nil)
                }
                // A key given twice in one save keeps its last record, as saving them in turn would.
                let twice = [ModelStateRecord(key: "twice", watermark: 1, state: [1]), ModelStateRecord(key: "twice", watermark: 2, state: [2, 2])]
                try await store.writeTransaction { try await store.saveModelStates(twice) }
                #expect(try await store.modelState(key: "twice") == twice[1])
                #expect(try await store.modelStateWatermark(key: "plan:2:b") == 5)
                #expect(try await store.modelState(key: "missing") == nil)
                struct Stop: Error {}
                await #expect(throws: Stop.self) {
                    try await store.writeTransaction {
                        try await store.saveModelStates([ModelStateRecord(key: "device:1", watermark: 9, state: [9])])
                        try await store.deleteModelState(key: "plan:2:b")
                        throw Stop()
                    }
                }
                for r in records { #expect(try await store.modelState(key: r.key) == r) }
                // Pages of a prefix, in key order, after a key; "plan;" is not of "plan:".
                #expect(try await store.modelStates(prefix: "plan:", after: nil, limit: 1) == [records[1]])
                #expect(try await store.modelStates(prefix: "plan:", after: "plan:1:a", limit: 5) == [records[2]])
                #expect(try await store.modelStates(prefix: "plan:", after: "plan:2:b", limit: 5) == [])
                #expect(try await store.modelStates(prefix: "p", after: nil, limit: 5) == [records[1], records[2], records[3]])
                try await store.writeTransaction { try await store.deleteModelStates(prefix: "plan:") }
                #expect(try await store.modelState(key: "plan:1:a") == nil)
                #expect(try await store.modelState(key: "plan:2:b") == nil)
                #expect(try await store.modelState(key: "plan;") == records[3])
                #expect(try await store.modelState(key: "device:1") == records[0])
            }
        }
    }

    /// What one statement reads ahead (a plan kept ahead's reads) answers as the store does
    /// without it: the last event, states, and whether a device has events after each file's
    /// end; an engine in process declines `withOneRead`, a server engine declines it inside a
    /// transaction and drops its body's result when the body read anything else.
    @Test(arguments: Engine.available)
    func readsAheadAnswerAsTheStoreDoes(engine: Engine) async throws {
        try await LogUnderTest.with(engine) { under, directory in
            let reference = try Store(path: directory.path + "/reference.sqlite", create: true)
            try await append(first, "a.csv", under, reference, directory)
            try await append(second, "b.csv", under, reference, directory)
            try await append(third, "c.csv", under, reference, directory)
            try await withModelStore(under) { store in
                let record = ModelStateRecord(key: "plans:4:x", watermark: 10, state: [1, 2, 3])
                try await store.writeTransaction { try await store.saveModelStates([record]) }
                let keys = ["plans:4:x", "missing"]
                // Each file's end (6, 10, 11), a number inside a file, and the start.
                let watermarks: [Int64] = [0, 3, 6, 10, 11]
                for device: Int64 in 1...6 {
                    let expected = try watermarks.map { try reference.hasEvents(ofDevice: device, afterID: $0, beforeMicros: .max) }
                    let reads = { () async throws -> [Bool] in
                        var answers: [Bool] = []
                        for watermark in watermarks { answers.append(try await store.hasEvents(ofDevice: device, afterID: watermark, beforeMicros: .max)) }
                        return answers
                    }
                    let prefetched = try await store.readTransaction {
                        try await store.prefetchModelStates(keys: keys, device: device)
                        #expect(try await store.lastEventID() == 11)
                        #expect(try await store.modelState(key: "plans:4:x") == record)
                        #expect(try await store.modelState(key: "missing") == nil)
                        return try await reads()
                    }
                    #expect(prefetched == expected, "device \(device)")
                    let once = try await store.withOneRead(keys: keys, device: device) { () async throws -> [Bool] in
                        #expect(try await store.lastEventID() == 11)
                        #expect(try await store.modelState(key: "plans:4:x") == record)
                        return try await reads()
                    }
                    switch engine {
                    case .sqlite: #expect(once == nil)
                    case .postgres: #expect(once == expected, "device \(device)")
                    }
                }
                // bob (5) has events in the second file only: none after its end.
                #expect(try reference.hasEvents(ofDevice: 5, afterID: 6, beforeMicros: .max))
                #expect(try !reference.hasEvents(ofDevice: 5, afterID: 10, beforeMicros: .max))
                // Anything else read in the body: declined, whatever the body returned.
                #expect(try await store.withOneRead(keys: keys, device: 1) { () async throws -> Int in
                    _ = try? await store.deviceNames(afterID: 0)
                    return 1
                } == nil)
                #expect(try await store.withOneRead(keys: keys, device: 1) { try await store.modelState(key: "other")?.watermark } == nil)
                // Inside a transaction: declined (the transaction's reads answer).
                let inside = try await store.readTransaction { try await store.withOneRead(keys: keys, device: 1) { 1 } }
                #expect(inside == nil)
                // And the store reads as before afterwards.
                #expect(try await store.deviceNames(afterID: 0) == (try reference.deviceNames(afterID: 0)))
            }
        }
    }

    /// A database written by schema 1 (no model state, no numbers): opening it for the model
    /// numbers its names and events as a schema 2 ingest would have.
    @Test func aSchemaOneDatabaseIsNumberedOnUpgrade() async throws {
        guard Engine.available.contains(.postgres) else { return }
        try await LogUnderTest.with(.postgres) { under, directory in
            let reference = try Store(path: directory.path + "/reference.sqlite", create: true)
            try await append(first, "a.csv", under, reference, directory)
            try await append(second, "b.csv", under, reference, directory)
            let database = try #require(under.database)
            // Back to what schema 1 had.
            for statement in [
                "DROP TABLE model_state", "DROP TABLE device_state", "ALTER TABLE devices DROP COLUMN seq", "ALTER TABLE apps DROP COLUMN seq",
                "ALTER TABLE files DROP COLUMN first_event", "DROP SEQUENCE device_seqs", "DROP SEQUENCE app_seqs",
                "UPDATE fetchcast_meta SET value = 1 WHERE key = 'schema_version'",
            ] {
                try await database.execute(statement)
            }
            await #expect(throws: StoreError.self) { try await PostgresEventLog.open(try PostgresLocation(url: under.location), create: false) }
            try await withModelStore(under) { store in
                #expect(try await store.deviceNames(afterID: 0) == (try reference.deviceNames(afterID: 0)))
                #expect(try await store.appNames(afterID: 0) == (try reference.appNames(afterID: 0)))
                #expect(try await store.lastEventID() == 10)
                #expect(try await events(store, after: 6) == (try events(reference, after: 6)))
                // New names continue the numbering.
                try await append(header + "1700000200,dora,maps,launch,,,,,,,\n", "c.csv", under, reference, directory)
                #expect(try await store.deviceNames(afterID: 5) == [6: "dora"])
                #expect(try await store.appNames(afterID: 0) == (try reference.appNames(afterID: 0)))
                #expect(try await store.lastEventID() == 11)
            }
        }
    }

    /// A database written by schema 3 (every state in `model_state`): opening it for the model
    /// moves each device's states to `device_state`, keyed by the device, and reads them as before.
    @Test func aSchemaThreeDatabaseMovesDeviceStatesOnUpgrade() async throws {
        guard Engine.available.contains(.postgres) else { return }
        try await LogUnderTest.with(.postgres) { under, directory in
            let reference = try Store(path: directory.path + "/reference.sqlite", create: true)
            try await append(first, "a.csv", under, reference, directory)
            let records = [
                ModelStateRecord(key: "device:1", watermark: 6, state: [0, 1, 2, 255]),
                ModelStateRecord(key: "epoch", watermark: 6, state: [1]),
                ModelStateRecord(key: "plans:1:a", watermark: 6, state: Array(repeating: 7, count: 100_000)),
                ModelStateRecord(key: "scheduler:4:b", watermark: 5, state: []),
            ]
            try await withModelStore(under) { store in try await store.writeTransaction { try await store.saveModelStates(records) } }
            let database = try #require(under.database)
            // Back to what schema 3 had, with a state of a device that is not there.
            for statement in [
                "INSERT INTO model_state(key, watermark, state) SELECT key, watermark, state FROM device_state",
                "INSERT INTO model_state(key, watermark, state) VALUES ('device:99', 1, '\\x00')",
                "DROP TABLE device_state",
                "UPDATE fetchcast_meta SET value = 3 WHERE key = 'schema_version'",
            ] {
                try await database.execute(statement)
            }
            try await withModelStore(under) { (store: any ModelStore) async throws in
                for r in records { #expect(try await store.modelState(key: r.key) == r) }
                #expect(try await store.modelState(key: "device:99") == nil)
            }
            #expect(try await database.strings("SELECT d.name || ' ' || s.key FROM device_state s JOIN devices d USING (device_id) ORDER BY s.key")
                    == ["zed device:1", "zed plans:1:a", "Alice scheduler:4:b"])
            #expect(try await database.strings("SELECT key FROM model_state ORDER BY key") == ["epoch"])
            #expect(try await database.strings("SELECT value::text FROM fetchcast_meta WHERE key = 'schema_version'") == ["4"])
        }
    }
}
