import FetchCastStore
import NIOCore
import PostgresNIO

/// The rows of one `COPY … FROM STDIN` (``PostgresEventLog/copy(into:columns:on:_:)``), sent
/// so that PostgresNIO's `COPY` writer is never called while its connection is closing
/// (``ConnectionWatch`` says why), and so that a `COPY` whose connection is lost ends, rather
/// than waits for ever on a write that PostgresNIO will not complete.
struct CopyStream {
    private let writer: PostgresCopyFromWriter
    private let watch: ConnectionWatch
    private let location: String

    init(writer: PostgresCopyFromWriter, watch: ConnectionWatch, location: String) {
        self.writer = writer
        self.watch = watch
        self.location = location
    }

    /// Sends rows (text format, each line ended).
    ///
    /// The write runs as a task of its own on the connection's event loop, made only if the
    /// connection accepts data then; this waits for it or for the connection's close.
    /// - Throws: ``StoreError`` (``StoreError/isUnavailable``) once the connection has closed;
    ///   PostgresNIO's error when the write fails; `CancellationError` when cancelled.
    func send(_ rows: ByteBuffer) async throws {
        try Task.checkCancellation()
        let (writer, watch) = (self.writer, self.watch)
        let outcome = await watch.outcome { report in
            Task(executorPreference: watch.executor) {
                await watch.moveToLoop()
                // Else the close, under way, ends the wait.
                guard watch.acceptsCopyData else { return }
                do {
                    try await writer.write(rows)
                    report(.success(()))
                } catch {
                    report(.failure(error))
                }
            }
        }
        switch outcome {
        case nil: throw lost()
        case .success?: return
        case .failure(let error)?: throw error
        }
    }

    /// Runs `body` (parsing, encoding) off the connection's event loop, which a `COPY` runs on.
    func offLoop<T>(_ body: () throws -> T) async throws -> T {
        try await withTaskExecutorPreference(globalConcurrentExecutor) {
            if watch.onLoop { await Task.yield() }
            return try body()
        }
    }

    /// Called as the `COPY`'s closure ends, on the connection's event loop, right before
    /// PostgresNIO's `copyFrom` sends `CopyDone` (when this returns) or `CopyFail` (when it
    /// throws) on the same turn of the loop: when the connection is closing, waits until its
    /// close has completed, then throws (both messages then fail with an error).
    /// - Parameter failure: Why the rows were not all sent, if they were not.
    func end(_ failure: (any Error)?) async throws {
        await watch.moveToLoop()
        if !watch.acceptsCopyData {
            await watch.untilClosed()
            // A bad row stays what it was; a failure of the connection's is its loss.
            if let failure, !(failure is PSQLError || failure is PostgresError || failure is ChannelError || failure is StoreError) {
                throw failure
            }
            throw lost()
        }
        if let failure { throw failure }
    }

    private func lost() -> StoreError {
        StoreError(path: location, message: "the connection to the database was lost during a COPY (nothing of it was stored); try again",
                   isUnavailable: true)
    }
}

extension PostgresEventLog {
    /// Runs `COPY table(columns) FROM STDIN` (text format) on `c`, its rows sent by `produce`
    /// through a ``CopyStream``.
    ///
    /// The `COPY` runs on the connection's event loop (its writer is called there only, when the
    /// connection accepts data); `produce` does its heavy work off it with
    /// ``CopyStream/offLoop(_:)``. A `COPY` whose connection is lost ends with a ``StoreError``
    /// (``StoreError/isUnavailable``) once the connection's close has completed; it never
    /// leaves a write waiting.
    /// - Parameters:
    ///   - table: The table, a name of this code's (never a user's).
    ///   - columns: Its columns, in the order of the rows' fields.
    ///   - c: The connection, in the transaction the rows belong to.
    ///   - produce: Sends the rows.
    /// - Throws: What `produce` throws, or PostgresNIO's error for the `COPY`.
    func copy(into table: String, columns: [String], on c: PostgresConnection, _ produce: (CopyStream) async throws -> Void) async throws {
        let watch = watch(of: c)
        guard let watch else {
            throw StoreError(path: location, message: "the connection to the database was lost before a COPY; try again", isUnavailable: true)
        }
        try await withTaskExecutorPreference(watch.executor) {
            // Started on the event loop, on a connection still open: PostgresNIO drops a
            // statement sent once the close has completed, and its COPY would wait for ever.
            await watch.moveToLoop()
            guard watch.acceptsCopyData else {
                throw StoreError(path: location, message: "the connection to the database was lost before a COPY; try again", isUnavailable: true)
            }
            try await c.copyFrom(table: table, columns: columns, logger: logger) { writer in
                let stream = CopyStream(writer: writer, watch: watch, location: location)
                var failure: (any Error)?
                do { try await produce(stream) } catch { failure = error }
                try await stream.end(failure)
            }
        }
    }
}
