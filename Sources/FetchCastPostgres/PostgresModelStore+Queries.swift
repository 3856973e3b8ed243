import FetchCastCore
import FetchCastStore
import Logging
import NIOCore
import PostgresNIO
import Synchronization

extension PostgresModelStore {
    // MARK: Queries

    func names(_ q: PostgresQuery) async throws -> [Int64: String] {
        var out: [Int64: String] = [:]
        for row in try await query(q) {
            let (id, name) = try row.decode((Int64, String).self)
            out[id] = name
        }
        return out
    }

    /// The first column of the first row, `nil` when there is no row or it is NULL.
    func scalar(_ q: PostgresQuery) async throws -> Int64? {
        guard let row = try await query(q).first else { return nil }
        return try row.decode(Int64?.self)
    }

    func run(_ q: PostgresQuery) async throws {
        _ = try await query(q)
    }

    /// Every row of `q`.
    func query(_ q: PostgresQuery) async throws -> PostgresQueryResult {
        if oneRead.active {
            oneRead.refused = true
            throw NeedsTransaction()
        }
        let connection: PostgresConnection
        if depth == 0 && pinned == 0 {
            // A statement that starts afresh: on a new connection when the last one was lost,
            // bounded by the work's deadline.
            connection = try await log.usableConnection()
            try await applyDeadline(on: connection)
        } else {
            connection = self.connection
            // A query on a closed connection would never be answered.
            guard !connection.isClosed else {
                throw StoreError(path: path, message: "the connection to the database was lost; try again", isUnavailable: true)
            }
        }
        do {
            return try await answered(connection.query(q, logger: logger), on: connection)
        } catch {
            throw mappedError(error)
        }
    }

    /// `future`'s value, or a connection loss once `connection`'s close has completed first
    /// (``ConnectionWatch/answered(_:)-(EventLoopFuture<T>)``: PostgresNIO 1.x never answers a
    /// statement written to a closed channel).
    private func answered<T: Sendable>(_ future: EventLoopFuture<T>, on connection: PostgresConnection) async throws -> T {
        guard let watch = log.watch(of: connection) else { throw ChannelError.ioOnClosedChannel }
        return try await watch.answered(future)
    }

    /// Sets the session's `statement_timeout` to what is left of the current ``WorkDeadline``
    /// (none without one), so that a statement the database holds up (a lock, a stuck server)
    /// is cancelled by the server at the deadline. Sent only when the session's value is short
    /// of what is left, or ends more than a tenth of the limit after it: most statements of a
    /// request run on the value set by an earlier one.
    /// - Throws: ``WorkStopped`` when the deadline has passed.
    private func applyDeadline(on connection: PostgresConnection) async throws {
        let current = statementTimeout.on === connection ? statementTimeout.milliseconds : 0
        let wanted: Int64
        if let work = WorkDeadline.current {
            try WorkDeadline.checkCurrent()
            let left = work.remaining
            wanted = max(1, Int64((Double(left.components.seconds) * 1000 + Double(left.components.attoseconds) / 1e15).rounded(.up)))
            let limit = work.limit.components.seconds * 1000 + work.limit.components.attoseconds / 1_000_000_000_000_000
            if current >= wanted && current - wanted <= max(50, limit / 10) { return }
        } else {
            wanted = 0
            if current == 0 { return }
        }
        do {
            _ = try await answered(connection.query("SELECT set_config('statement_timeout', \(String(wanted)), false)", logger: logger), on: connection)
        } catch {
            throw mappedError(error)
        }
        statementTimeout = (wanted, connection)
    }

    /// A statement's failure as this store reports it: a statement the server cancelled at the
    /// work's deadline (SQLSTATE 57014, `statement_timeout`) as ``WorkStopped``; others as
    /// ``PostgresEventLog/mapped(_:)`` does.
    private func mappedError(_ error: any Error) -> any Error {
        if let e = error as? PSQLError, e.serverInfo?[.sqlState] == "57014", let work = WorkDeadline.current {
            return work.reason ?? WorkStopped.pastDeadline(work.limit)
        }
        return log.mapped(error)
    }
}
