import FetchCastCore
import FetchCastPostgres
@testable import FetchCastStore
import FetchCastTestSupport
import Testing

private let fileA = header + """
    1700000000,zed,news,launch,,,,,,,
    1700000000,caf\u{E9},mail,launch,,,,,,,
    1700000000,,news,publish,,,,,,,

    """
private let fileB = header + """
    1700000100,bob,news,launch,,,,,,,
    1699999880,zed,,state,,,,wifi,charging,80,off
    1700000100,caf\u{E9},news,launch,,,,,,,

    """
private let fileC = header + """
    1700000200,Alice,news,launch,,,,,,,
    1700000300,zed,chat,fetch,noData,,,,,,

    """

/// What the model layer sees of a store's numbering: the last event's number, and for each
/// watermark (0 and the end of each file: the only numbers a fold saves), which devices changed
/// after it and the events a fold from it reads.
private struct Numbering: Equatable {
    var last: Int64
    var changed: [[Int64]]
    var everyDevice: [Bool]
    var events: [[String]]

    /// 0 and the last event of each of the reference's files.
    static func watermarks(_ reference: Store) throws -> [Int64] {
        let s = try reference.connection.prepare("SELECT last_event_id FROM files WHERE last_event_id IS NOT NULL ORDER BY id")
        var out: [Int64] = [0]
        while try s.step() { out.append(s.int(0)) }
        return out
    }

    init(_ store: any ModelStore, watermarks: [Int64]) async throws {
        last = try await store.lastEventID()
        (changed, everyDevice, events) = ([], [], [])
        for watermark in watermarks {
            let c = try await store.devicesWithEvents(afterID: watermark)
            changed.append(c.devices)
            everyDevice.append(c.everyDevice)
            var read: [String] = []
            try await store.readTransaction {
                try await store.forEachEvent(afterID: watermark, devices: 1...1_000) { batch in
                    read += batch.map { "\($0.timeMicros) \($0.device) \($0.app) \($0.kind)" }
                }
            }
            events.append(read)
        }
    }
}

/// `forget` on every engine, against a reference SQLite store given the same files and the same
/// forgets: the same files listed, the same refusals, and the same event numbers after (what the
/// model layer's watermarks are).
@Suite("Forget (every engine)")
struct ForgetConformanceTests {
    private func withModelStore<T>(_ under: LogUnderTest, _ body: (any ModelStore) async throws -> T) async throws -> T {
        switch under.engine {
        case .sqlite: return try await body(try Store(path: under.location, create: false))
        case .postgres:
            let store = PostgresModelStore(log: try await PostgresEventLog.open(try PostgresLocation(url: under.location), create: false))
            let result = await Result(awaiting: { try await body(store) })
            await store.close()
            return try result.get()
        }
    }

    private func forget(_ name: String, _ under: LogUnderTest, _ reference: Store) async throws {
        let log = try await under.open()
        let removed = try await log.forget(name)
        await log.close()
        #expect(removed == (try reference.forget(name)))
    }

    private func expectSame(_ under: LogUnderTest, _ reference: Store, _ note: Comment) async throws {
        let log = try await under.open()
        #expect(try await log.files() == (try reference.files()), note)
        #expect(try await Snapshot(log) == (try await Snapshot(reference)), note)
        await log.close()
        let watermarks = try Numbering.watermarks(reference)
        let numbering = try await withModelStore(under) { try await Numbering($0, watermarks: watermarks) }
        #expect(numbering == (try await Numbering(reference, watermarks: watermarks)), note)
    }

    @Test(arguments: Engine.available)
    func eventsAreNumberedAsOnSQLiteAfterAForget(engine: Engine) async throws {
        try await LogUnderTest.with(engine) { under, directory in
            let reference = try Store(path: directory.path + "/reference.sqlite", create: true)
            for (text, name) in [(fileA, "a.csv"), (fileB, "b.csv"), (fileC, "c.csv")] {
                try await append(text, name, under, reference, directory)
            }
            try await expectSame(under, reference, "three files")
            #expect(try reference.files().map(\.id) == [1, 2, 3])
            // A middle file: the others keep their numbers.
            try await forget("b.csv", under, reference)
            try await expectSame(under, reference, "b forgotten")
            #expect(try reference.lastEventID() == 8)
            // A new mark of 8 random bytes in the emptied model state (ForgetMark).
            let mark = try await withModelStore(under) { try await $0.modelState(key: ForgetMark.key) }
            #expect(mark?.watermark == 8 && mark?.state.count == 8)
            // The last file: its id and numbers are taken again by the next file.
            try await forget("c.csv", under, reference)
            try await expectSame(under, reference, "c forgotten")
            #expect(try reference.lastEventID() == 3)
            let next = try await withModelStore(under) { try await $0.modelState(key: ForgetMark.key) }
            #expect(next?.watermark == 3 && next?.state.count == 8 && next?.state != mark?.state)
            try await append(fileC, "c.csv", under, reference, directory)
            try await expectSame(under, reference, "c again")
            #expect(try reference.files().map(\.id) == [1, 2])
            try await append(fileB, "b.csv", under, reference, directory)
            try await expectSame(under, reference, "b again")
            #expect(try reference.files().map(\.id) == [1, 2, 3])
            // Every file: numbers start again from 1.
            for name in ["a.csv", "c.csv", "b.csv"] { try await forget(name, under, reference) }
            try await expectSame(under, reference, "none")
            try await append(fileB, "b.csv", under, reference, directory)
            try await expectSame(under, reference, "b alone")
            #expect(try reference.files().map(\.id) == [1])
        }
    }

    @Test(arguments: Engine.available)
    func aRefusedForgetChangesNothing(engine: Engine) async throws {
        try await LogUnderTest.with(engine) { under, directory in
            let reference = try Store(path: directory.path + "/reference.sqlite", create: true)
            try await append(fileA, "a.csv", under, reference, directory)
            try await append(fileB, "a.csv", under, reference, directory)
            let log = try await under.open()
            let before = try await Snapshot(log)
            let files = try await log.files()
            for argument in ["a.csv", "nothing.csv", "0123456789abcdef", "abc"] {
                let expected = #expect(throws: StoreError.self) { try reference.forget(argument) }
                await #expect(throws: StoreError.self, "\(argument)") {
                    do { _ = try await log.forget(argument) } catch let error as StoreError {
                        #expect(error.message == expected?.message)
                        throw error
                    }
                }
            }
            #expect(try await Snapshot(log) == before)
            #expect(try await log.files() == files)
            // Both by full hash, any case.
            let removed = try await log.forget(files[1].sha256.uppercased())
            #expect(removed == files[1])
            #expect(try await log.files() == [files[0]])
            await log.close()
        }
    }
}
