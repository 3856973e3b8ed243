import FetchCastCore

/// What the model layer (`ModelRepository`: the fold, the priors, scheduler checkpoints and
/// plan tables) asks of a store, whatever engine holds it: the embedded SQLite ``Store``, or a
/// PostgreSQL database.
///
/// Asynchronous, so that a PostgreSQL round trip holds no thread (on SQLite nothing in it
/// suspends); one transaction at a time per store. Nothing here names SQL or an engine's types.
///
/// **Ids.** Devices and apps are numbered densely from 1 in the order their first event was
/// ingested, and never renumbered (on SQLite, the rowids of `devices` and `apps`). Events are
/// numbered in ingest order, file after file, so that the number of the last event is the count
/// of events stored: a *watermark* (the last event folded into a state) is one such number.
/// Watermarks the model layer saves are always ``lastEventID()`` of some snapshot, so a file's
/// events are either all at or below one or all above it.
package protocol ModelStore: AnyObject {
    /// Where the store is, for messages: a file path, or a URL without its password.
    var path: String { get }

    /// Runs `body` in a read transaction: every read in it sees one snapshot. Inside a
    /// transaction already, `body` runs in that one.
    func readTransaction<T>(_ body: () async throws -> T) async throws -> T

    /// Runs `body` in a write transaction: committed when it returns, rolled back when it
    /// throws. Write transactions on one store take turns (SQLite's write lock; an advisory
    /// lock on PostgreSQL), and each sees one snapshot taken after its turn came, so two
    /// processes never fold the same events at once.
    func writeTransaction<T>(_ body: () async throws -> T) async throws -> T

    /// The number of the last event stored (0 for an empty store).
    func lastEventID() async throws -> Int64

    /// Device names by id, of the devices with an id greater than `afterID` (0: every device).
    /// Ids and names never change once stored and none is deleted, so a caller keeps the names
    /// and reads only the new ones.
    func deviceNames(afterID: Int64) async throws -> [Int64: String]

    /// App names by id, of the apps with an id greater than `afterID` (as ``deviceNames(afterID:)``).
    func appNames(afterID: Int64) async throws -> [Int64: String]

    /// Whether an event of `device`, or a publish to every device, numbered above `afterID` is
    /// dated before `beforeMicros`: whether the device's history up to that instant changed
    /// since the store's last event was `afterID`.
    func hasEvents(ofDevice device: Int64, afterID: Int64, beforeMicros: Int64) async throws -> Bool

    /// The devices with events numbered above `afterID`, in id order, and whether any of those
    /// events is a publish to every device: what a fold of the new events changes.
    func devicesWithEvents(afterID: Int64) async throws -> (devices: [Int64], everyDevice: Bool)

    /// Calls `body` with `device`'s events in [`fromMicros`, `beforeMicros`) and the publishes
    /// to every device then, in plain time order (ties in ingest order). What a plan is made
    /// from, once each instant is put in the order a policy is told of it (``InstantOrder``).
    func deviceHistory(
        ofDevice device: Int64, fromMicros: Int64, beforeMicros: Int64, _ body: (StoredEvent) throws -> Void
    ) async throws

    /// Calls `batches` with the events numbered above `afterID` whose device id is in
    /// `devices`, and the publishes to every device (device ``EncodedEvent/everyDevice``), in
    /// ingest order, a batch at a time. Device and app fields are the store's ids; only the
    /// instant, offset, device, app, kind, result and conditions are read. Inside the caller's
    /// transaction; an error `batches` throws stops the scan and is rethrown as it was.
    func forEachEvent(afterID: Int64, devices: ClosedRange<Int64>, _ batches: ([EncodedEvent]) throws -> Void) async throws

    /// Model state is kept by key: a device's keys name it (``DeviceStateKey``), the fleet's do not.
    ///
    /// Reads the state kept under `key` in place: `body` gets its watermark and bytes (valid
    /// only inside it); `nil` when there is none.
    func withModelState<T>(key: String, _ body: (_ watermark: Int64, _ state: UnsafeRawBufferPointer) -> T) async throws -> T?

    /// The watermark of the state kept under `key`, without reading the state; `nil` when none.
    func modelStateWatermark(key: String) async throws -> Int64?

    /// A page of the states whose keys start with `prefix` (which ends in a character below
    /// U+007F), in key order (bytes), after `after` when given: at most `limit`.
    func modelStates(prefix: String, after: String?, limit: Int) async throws -> [ModelStateRecord]

    /// Keeps states, replacing what their keys held (inside the caller's write transaction). A
    /// device's state (``DeviceStateKey``) is kept with the device: an engine that keeps it
    /// beside the device's events (PostgreSQL) refuses one of a device it does not hold.
    func saveModelStates(_ records: [ModelStateRecord]) async throws

    /// Forgets the state kept under `key`, if any (inside the caller's write transaction).
    func deleteModelState(key: String) async throws

    /// Forgets every state whose key starts with `prefix`, which ends in a character below
    /// U+007F (inside the caller's write transaction).
    func deleteModelStates(prefix: String) async throws

    /// Says which states the caller's read transaction is about to read: an engine a round trip
    /// away may read them (and ``lastEventID()``, and what
    /// `hasEvents(ofDevice: device, afterID:, beforeMicros: .max)` needs for `device`) at once
    /// and answer those reads from its copy until the transaction ends. Nothing else changes; an
    /// engine in process does nothing.
    func prefetchModelStates(keys: [String], device: Int64?) async throws

    /// Runs `body` on what one statement reads, without a transaction: the reads
    /// ``prefetchModelStates(keys:device:)`` names, from one snapshot. For an engine a round trip
    /// away, where a transaction costs two more. `nil` when the engine does not (an engine in
    /// process: a read transaction costs nothing), when called inside a transaction, or when
    /// `body` read anything else (its result is then dropped): the caller reads in a read
    /// transaction instead. `body` must not write.
    func withOneRead<T>(keys: [String], device: Int64, _ body: () async throws -> T) async throws -> T?

    /// Runs `body`, without a transaction, on what changed since the store's last event was
    /// `afterID`, for a process that keeps what it read in memory: the states of `keys` and the
    /// last event's number `n`, from one snapshot (as ``withOneRead(keys:device:_:)`` reads them),
    /// and, passed to `body`, for every device with events in a file whose events start in
    /// [`afterID`, `n`) (0 for events of every device), the largest such start: the device has
    /// events after any number not above it. A file starting at `n` or later is not one of those
    /// (the next call, from `n`, sees it). `nil` when the engine does not (an engine in process),
    /// inside a transaction, or when `body` read anything else.
    func withChanges<T>(afterID: Int64, keys: [String], _ body: (_ touched: [Int64: Int64]) async throws -> T) async throws -> T?

    /// Runs `body` while this connection holds the warm-up's turn among every process on the
    /// store, so that no two warm devices at once; a process that dies gives the turn up. While
    /// another holds it, asks `shouldStop` every few hundred milliseconds and returns `nil` when
    /// it says stop. An engine one process owns (SQLite under `serve`) runs `body` at once.
    func withWarmUpTurn<T>(shouldStop: () -> Bool, _ body: () async throws -> T) async throws -> T?
}

extension ModelStore {
    package func prefetchModelStates(keys: [String], device: Int64?) async throws {}

    package func withOneRead<T>(keys: [String], device: Int64, _ body: () async throws -> T) async throws -> T? { nil }

    package func withChanges<T>(afterID: Int64, keys: [String], _ body: (_ touched: [Int64: Int64]) async throws -> T) async throws -> T? { nil }

    package func withWarmUpTurn<T>(shouldStop: () -> Bool, _ body: () async throws -> T) async throws -> T? { try await body() }

    /// The state kept under `key`, copied out; `nil` when there is none.
    package func modelState(key: String) async throws -> ModelStateRecord? {
        try await withModelState(key: key) { watermark, state in ModelStateRecord(key: key, watermark: watermark, state: Array(state)) }
    }
}

/// A persisted blob of learned state and the last event folded into it.
package struct ModelStateRecord: Sendable, Hashable {
    /// The key (e.g. `device:3`).
    package var key: String
    /// Events numbered up to this are in the state.
    package var watermark: Int64
    /// The encoded state.
    package var state: [UInt8]

    /// Creates a record.
    package init(key: String, watermark: Int64, state: [UInt8]) {
        self.key = key
        self.watermark = watermark
        self.state = state
    }
}
