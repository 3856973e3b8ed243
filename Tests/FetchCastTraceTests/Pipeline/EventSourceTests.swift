import FetchCastCore
import Synchronization
import Testing
import FetchCastTrace
import FetchCastTestSupport

struct EventSourceTests {
    static let csv = """
        time,device,app,event,result,bytes,duration_ms
        2013-11-09T22:00:01Z,dev-1,com.a,launch,,,
        2013-11-09T22:00:02Z,dev-2,com.b,launch,,,
        bad row
        2013-11-09T22:00:03Z,dev-1,com.c,fetch,newData,10,
        2013-11-09T22:00:04Z,dev-3,com.a,launch,,,

        """

    @Test func aTraceThroughTheSourceIsTheTraceReadInPlace() throws {
        let folder = try TemporaryDirectory()
        let path = try folder.write("t.csv", Self.csv)
        // Read in place, on this thread.
        let direct = try TraceReader(path: path, symbols: SymbolTable())
        var expected: [EncodedEvent] = []
        var rejected: [String] = []
        while try direct.next(into: &expected, maxCount: 2, onInvalid: { _, text in rejected.append(text) }) {}
        #expect(expected.count == 4)
        #expect(rejected == ["bad row"])

        let symbols = SymbolTable()
        let source = EventSource(try TraceReader(path: path, symbols: symbols), batchSize: 2, capacity: 1, collectRejects: true)
        var events: [EncodedEvent] = []
        var names: [String] = []
        var rejects: [String] = []
        let end = try source.forEachBatch { batch in
            #expect(batch.events.count <= 2)
            #expect(batch.file == nil)
            events += batch.events
            names += batch.newNames
            rejects += batch.rejects.map(\.text)
        }
        #expect(events == expected)
        #expect(names == direct.symbols.allNames)
        #expect(names == symbols.allNames)
        #expect(rejects == ["bad row"])
        #expect(end.sha256 == SHA256.hex(of: Array(Self.csv.utf8)))
        #expect(end.bytesRead == Int64(Self.csv.utf8.count))
        #expect(end.format == .csv)
    }

    /// A producer that fails after two batches and records that it was finished.
    final class Failing: EventProducer {
        struct Failure: Error, Sendable, Equatable {}
        var produced = 0
        let finished: @Sendable () -> Void
        init(finished: @escaping @Sendable () -> Void) { self.finished = finished }
        var symbolTable: SymbolTable? { nil }
        var batchFile: String? { "f\(produced)" }
        var bytesRead: Int64 { Int64(produced) }
        func next(into batch: inout [EncodedEvent], maxCount: Int, onInvalid: ((TraceError, String) -> Void)?) throws(Failure) -> Bool {
            if produced == 2 { throw Failure() }
            produced += 1
            batch.append(EncodedEvent(timeMicros: Int64(produced), utcOffsetSeconds: 0, device: 0, app: 0, kind: .launch))
            return true
        }
        func finish() { finished() }
    }

    @Test func aFailureComesAfterTheBatchesBeforeItAndTheProducerIsFinished() {
        let finishedCount = FinishCount()
        let source = EventSource(Failing(finished: { finishedCount.add() }), batchSize: 8, capacity: 1)
        var files: [String?] = []
        #expect(throws: Failing.Failure()) {
            try source.forEachBatch { files.append($0.file) }
        }
        #expect(files == ["f1", "f2"])
        #expect(finishedCount.value == 1)
    }

    @Test func aConsumerErrorStopsTheProducer() {
        struct Stop: Error {}
        let finishedCount = FinishCount()
        let source = EventSource(Failing(finished: { finishedCount.add() }), batchSize: 8, capacity: 1)
        #expect(throws: Stop.self) { try source.forEachBatch { _ in throw Stop() } }
        // cancel() returned only once the producer ended: it was finished by then.
        #expect(finishedCount.value == 1)
    }
}

/// A count shared with a producer's thread.
final class FinishCount: Sendable {
    private let count = Mutex(0)
    func add() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}
