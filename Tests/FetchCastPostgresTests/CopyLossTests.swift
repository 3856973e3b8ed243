import FetchCastPostgres
import FetchCastStore
import FetchCastTestSupport
import Foundation
import Synchronization
import Testing

/// An append whose connection is lost while its `COPY` streams (issue 40): PostgresNIO (1.x)
/// drops a statement sent on a connection whose close has completed (it is never answered) and
/// stops the process when a `COPY` writes to a connection that is closing.
@Suite(.serialized, .enabled(if: PostgresTestDatabase.adminURL != nil, Comment(rawValue: PostgresTestDatabase.skipReason)))
struct CopyLossTests {
    /// The database's sessions end once rows of a large append have reached the server: the
    /// append itself (no wait given up around it) fails as unavailable, nothing stored, and the
    /// same file appended again, on a new connection, is stored whole. Without `CopyStream` the
    /// append waited for ever (its `ROLLBACK`, or its next `COPY`, sent on the closed connection).
    @Test func anAppendWhoseConnectionIsLostDuringItsCopyFailsAsUnavailable() async throws {
        try await LogUnderTest.with(.postgres) { under, directory in
            let database = under.database!
            let log = try await PostgresEventLog.open(try PostgresLocation(url: under.location), create: true)
            let rows = 100_000
            let path = try directory.write("large.csv", generatedTrace(rows: rows, devices: 500))
            let ended = Mutex(false)
            let appending = Task {
                defer { ended.withLock { $0 = true } }
                return try await log.append(path: path, name: nil, options: fixedOptions())
            }
            let watching = ContinuousClock.now
            var streaming = false
            while !streaming, ContinuousClock.now - watching < .seconds(60) {
                streaming = try await database.strings(
                    "SELECT count(*)::text FROM pg_stat_progress_copy WHERE datname = current_database() AND bytes_processed > 0") != ["0"]
                if !streaming { try await Task.sleep(for: .milliseconds(5)) }
            }
            #expect(streaming, "no COPY seen streaming")
            try await database.setReachable(false)
            try await database.setReachable(true)
            let lost = ContinuousClock.now
            while !ended.withLock({ $0 }), ContinuousClock.now - lost < .seconds(60) { try await Task.sleep(for: .milliseconds(20)) }
            #expect(ended.withLock { $0 }, "the append did not end within 60 s of the loss")
            guard ended.withLock({ $0 }) else { return }
            switch await appending.result {
            case .success(let result): Issue.record("the append succeeded: \(result)")
            case .failure(let error):
                #expect((error as? StoreError)?.isUnavailable == true, "\(error)")
            }
            #expect(try await database.strings("SELECT count(*)::text FROM event_log") == ["0"], "nothing of the lost append stored")
            let again = try await log.append(path: path, name: nil, options: fixedOptions())
            #expect(again.status == .ingested && again.events == Int64(rows))
            await log.close()
        }
    }
}
