extension Connection {
    /// How a transaction takes its locks.
    enum TransactionMode: String {
        /// `BEGIN`: a read snapshot, upgraded to a write lock at the first write.
        case deferred = "BEGIN"
        /// `BEGIN IMMEDIATE`: takes the write lock at once (writers, so they never deadlock).
        case immediate = "BEGIN IMMEDIATE"
    }

    /// Runs `body` in a transaction: commits when it returns, rolls back when it throws.
    ///
    /// The one place the store begins, commits and rolls back. `storeError` turns a failure of
    /// `BEGIN` or `COMMIT` into the body's error type.
    /// - Throws: What `body` throws, or `storeError` of a failed `BEGIN`/`COMMIT`.
    func transaction<T, E: Error>(
        _ mode: TransactionMode, storeError: (StoreError) -> E, _ body: () throws(E) -> T
    ) throws(E) -> T {
        do { try execute(mode.rawValue) } catch { throw storeError(error) }
        let value: T
        do {
            value = try body()
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
        do { try commit() } catch { throw storeError(error) }
        return value
    }

    /// ``transaction(_:storeError:_:)`` for a body that awaits (the model layer, which reaches
    /// every engine through the same asynchronous seam): on this engine nothing in it suspends.
    func transaction<T>(_ mode: TransactionMode, _ body: () async throws -> T) async throws -> T {
        try execute(mode.rawValue)
        let value: T
        do {
            value = try await body()
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
        try commit()
        return value
    }

    /// `COMMIT`, rolling back when it fails (the transaction then ends either way).
    private func commit() throws(StoreError) {
        do {
            try execute("COMMIT")
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// Runs `body` in a transaction whose only failures are the store's.
    func transaction<T>(_ mode: TransactionMode, _ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        try transaction(mode, storeError: { $0 }, body)
    }
}
