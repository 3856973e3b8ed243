import FetchCastTestSupport
import Testing
@testable import FetchCastStore

struct TransactionTests {
    private struct Refused: Error {}

    private func connectionWithTable() throws -> Connection {
        let c = try Connection(path: ":memory:", create: true)
        try c.execute("CREATE TABLE t(x INTEGER)")
        return c
    }

    @Test(arguments: [Connection.TransactionMode.deferred, .immediate])
    func commitsWhatTheBodyWroteWhenItReturns(mode: Connection.TransactionMode) throws {
        let c = try connectionWithTable()
        let value = try c.transaction(mode) { () throws(StoreError) in
            try c.execute("INSERT INTO t VALUES (1), (2)")
            #expect(c.inTransaction)
            return 7
        }
        #expect(value == 7)
        #expect(!c.inTransaction)
        #expect(try c.scalarInt("SELECT count(*) FROM t") == 2)
    }

    @Test func rollsBackAndRethrowsTheBodysOwnError() throws {
        let c = try connectionWithTable()
        #expect(throws: Refused.self) {
            try c.transaction(.immediate, storeError: { $0 as any Error }) { () throws in
                try c.execute("INSERT INTO t VALUES (1)")
                throw Refused()
            }
        }
        #expect(!c.inTransaction)
        #expect(try c.scalarInt("SELECT count(*) FROM t") == 0)
    }

    @Test func aFailedBeginIsTheStoresErrorInTheBodysType() throws {
        let c = try connectionWithTable()
        try c.execute("BEGIN")  // a transaction cannot begin inside another
        defer { try? c.execute("ROLLBACK") }
        var ran = false
        #expect(throws: StoreError.self) {
            try c.transaction(.deferred) { () throws(StoreError) in ran = true }
        }
        #expect(!ran)
    }

    @Test func namesTheResultCodesTheStoreActsOn() {
        // Extended codes keep their primary code in the low byte: SQLITE_IOERR_WRITE is 778.
        #expect(SQLiteResult(code: 778) == .ioError)
        #expect(SQLiteResult(code: 26) == .notADatabase)
        #expect(SQLiteResult(code: 5 | (2 << 8)) == .busy)
        #expect(SQLiteResult(code: 19) == nil)  // SQLITE_CONSTRAINT: not one the store acts on
        #expect(StoreError(path: "s", message: "m", code: 13).isWriteFailure)
        #expect(StoreError(path: "s", message: "m", code: 8 | (3 << 8)).isWriteFailure)
        #expect(!StoreError(path: "s", message: "m", code: 5).isWriteFailure)
        #expect(!StoreError(path: "s", message: "m").isWriteFailure)
    }
}
