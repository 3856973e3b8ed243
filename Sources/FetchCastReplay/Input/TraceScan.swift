import FetchCastCore
import FetchCastStore
import FetchCastTrace

/// One device as pass 1 found it.
struct ScannedDevice: Sendable {
    /// The device id.
    var name: String
    /// Its spool stream.
    var stream: Int
    /// Launches of any app.
    var launches: Int
    /// First and last launch (any app), Unix microseconds.
    var firstLaunchMicros: Int64
    var lastLaunchMicros: Int64
    /// The UTC offset of its first launch or fetch.
    var firstOffset: Int32
    /// Fetch-enabled apps (canonical ids), most launched first, ties by id.
    var apps: [Int32]
    /// Device days: (last launch − first launch) / 86400.
    var days: Double { Double(lastLaunchMicros - firstLaunchMicros) / 86_400_000_000 }
}

/// The outcome of pass 1: the spool, the devices to replay and the app naming.
final class ScanResult: Sendable {
    let spool: Spool
    /// App names by canonical id (ascending byte order of the names).
    let appNames: [String]
    /// Raw symbol → canonical app id (−1 when the symbol is not an app).
    let canonicalApp: [Int32]
    /// Canonical id → whether the input has `publish` events for the app.
    let appHasContent: [Bool]
    /// Devices with at least one launch, in ascending byte order of their names.
    let devices: [ScannedDevice]
    /// The stream of publishes to every device, if any.
    let globalStream: Int?
    /// Every input's identity.
    let inputs: [InputDigest]
    /// Events kept for the replay.
    let eventsKept: Int64
    /// `state` rows kept for the replay.
    let stateRows: Int64
    /// Canonical id → the mean `bytes` of the app's fetch rows that give it (`nil`: none do).
    let appMeanBytes: [Double?]

    init(spool: Spool, appNames: [String], canonicalApp: [Int32], appHasContent: [Bool], devices: [ScannedDevice],
         globalStream: Int?, inputs: [InputDigest], eventsKept: Int64, stateRows: Int64 = 0, appMeanBytes: [Double?] = []) {
        self.stateRows = stateRows
        self.appMeanBytes = appMeanBytes
        self.spool = spool
        self.appNames = appNames
        self.canonicalApp = canonicalApp
        self.appHasContent = appHasContent
        self.devices = devices
        self.globalStream = globalStream
        self.inputs = inputs
        self.eventsKept = eventsKept
    }
}

/// Pass 1: reads every input once, checks each device's time order, counts launches per
/// (device, app), and spools the events it keeps.
///
/// - Complexity: O(events) time; memory O(devices × apps) plus the spool's block buffers.
struct TraceScan {
    let options: EvaluationOptions
    private let symbols = SymbolTable()
    private let spool: Spool
    /// Device symbol → stream (−1 unseen, −2 filtered out by `--devices`).
    private var streamOfSymbol: [Int32] = []
    private var streamDevice: [Int32] = []
    private var lastMicros: [Int64] = []
    private var lastOffset: [Int32] = []
    private var launches: [Int] = []
    private var firstLaunch: [Int64] = []
    private var lastLaunch: [Int64] = []
    private var firstOffset: [Int32?] = []
    private var globalStream: Int?
    private var launchCounts: [Int64: Int32] = [:]
    /// Per symbol: bit 0 seen as an app, bit 1 has publishes.
    private var appFlags: [UInt8] = []
    private var inputs: [InputDigest] = []
    /// Symbol names as known to this thread (the parser interns on its own thread).
    private var names: [String] = []
    private var kept: Int64 = 0
    private var states: Int64 = 0
    /// Per app symbol: Σ bytes and count of its fetch rows that give bytes.
    private var fetchBytes: [Int32: (sum: Double, count: Int)] = [:]
    private let fromMicros: Int64
    private let toMicros: Int64

    init(options: EvaluationOptions) throws(EvaluationError) {
        self.options = options
        spool = try Spool(directory: options.temporaryDirectory)
        fromMicros = options.from.map { Int64(($0 * 1_000_000).rounded(.up)) } ?? Int64.min
        toMicros = options.to.map { Int64(($0 * 1_000_000).rounded(.up)) } ?? Int64.max
        launchCounts.reserveCapacity(4096)
    }

    /// Reads an input.
    mutating func read(_ input: EvaluationInput, progress: ((String) -> Void)?) throws(EvaluationError) {
        switch input {
        case .files(let paths):
            for path in paths { try readFile(path, progress: progress) }
        case .store(let store):
            try readStore(store)
        case .events(let events):
            var batch: [EncodedEvent] = []
            batch.reserveCapacity(events.count)
            for (i, e) in events.enumerated() {
                batch.append(EncodedEvent(
                    timeMicros: e.timeMicros, utcOffsetSeconds: e.utcOffsetSeconds,
                    device: e.device.isEmpty ? EncodedEvent.everyDevice : symbols.intern(e.device),
                    app: symbols.intern(e.app), kind: e.kind, result: e.result, line: Int64(i + 1),
                    conditions: e.conditions))
            }
            syncNames()
            try consume(batch, file: "<events>")
            inputs.append(InputDigest(path: "<events>", sha256: "", events: Int64(events.count)))
        }
    }

    private mutating func readFile(_ path: String, progress: ((String) -> Void)?) throws(EvaluationError) {
        let reader: TraceReader
        do {
            reader = try TraceReader(path: path, symbols: symbols, options: options.trace)
        } catch {
            throw .trace(error)
        }
        let parser = EventSource(reader, batchSize: 4096, capacity: 8)
        var count: Int64 = 0
        var lastReport: Int64 = 0
        while true {
            switch parser.next() {
            case .batch(let parsed):
                names.append(contentsOf: parsed.newNames)
                count += Int64(parsed.events.count)
                do {
                    try consume(parsed.events, file: path)
                } catch {
                    parser.cancel()
                    throw error
                }
                if let progress, count >> 20 != lastReport {
                    lastReport = count >> 20
                    progress("\(path): \(count) events")
                }
            case .end(let end):
                inputs.append(InputDigest(path: path, sha256: end.sha256, events: count))
                return
            case .failure(let error):
                throw .trace(error)
            }
        }
    }

    /// Mirrors names interned on this thread (store and in-memory inputs).
    private mutating func syncNames() {
        while names.count < symbols.count { names.append(symbols.name(Int32(names.count))) }
    }

    /// Reads the store's time-ordered scan (``Store/scanTimeOrdered(symbols:devices:files:batches:)``,
    /// through an ``EventSource``); `--devices` is applied by the store's query (publishes to
    /// every device are kept), so other devices' rows are never read out.
    private mutating func readStore(_ store: Store) throws(EvaluationError) {
        do {
            try store.scanTimeOrdered(
                symbols: symbols, devices: options.devices, files: { files in startLog(files) },
                batches: { events, file in try consume(events, file: file) })
        } catch {
            throw Self.evaluationError(error)
        }
    }

    /// Reads any engine's event log (``EventLogScanner``) as ``readStore(_:)`` reads an SQLite
    /// store: the same events in the same order, `--devices` applied by the engine.
    mutating func readLog(_ log: any EventLogScanner) async throws(EvaluationError) {
        do {
            try await log.scanTimeOrdered(
                symbols: symbols, devices: options.devices, files: { files in startLog(files) },
                batches: { events, file in try consume(events, file: file) })
        } catch {
            throw Self.evaluationError(error)
        }
    }

    /// Records a log's files as the inputs, once every name was interned (before any batch).
    private mutating func startLog(_ files: [TimeOrderedScan.File]) {
        for f in files { inputs.append(InputDigest(path: f.name, sha256: f.sha256, events: f.rows)) }
        syncNames()
    }

    /// What a scan threw: an ``EvaluationError`` of ``consume(_:file:)`` as it was, an engine's
    /// failure as ``EvaluationError/store(_:)``.
    private static func evaluationError(_ error: any Error) -> EvaluationError {
        if let error = error as? EvaluationError { return error }
        if let error = error as? StoreError { return .store(error.description) }
        return .store(String(describing: error))
    }

    private mutating func newStream(device: Int32) -> Int {
        let s = spool.addStream()
        streamDevice.append(device)
        lastMicros.append(Int64.min)
        lastOffset.append(0)
        launches.append(0)
        firstLaunch.append(Int64.max)
        lastLaunch.append(Int64.min)
        firstOffset.append(nil)
        return s
    }

    private mutating func stream(forDevice symbol: Int32) -> Int {
        if symbol == EncodedEvent.everyDevice {
            if let g = globalStream { return g }
            let g = newStream(device: EncodedEvent.everyDevice)
            globalStream = g
            return g
        }
        let i = Int(symbol)
        if i >= streamOfSymbol.count {
            streamOfSymbol.append(contentsOf: repeatElement(-1, count: max(i + 1 - streamOfSymbol.count, names.count - streamOfSymbol.count)))
        }
        let s = streamOfSymbol[i]
        if s != -1 { return Int(s) }
        if let allowed = options.devices, !allowed.contains(names[i]) {
            streamOfSymbol[i] = -2
            return -2
        }
        let made = newStream(device: symbol)
        streamOfSymbol[i] = Int32(made)
        return made
    }

    private mutating func consume(_ batch: [EncodedEvent], file: String) throws(EvaluationError) {
        for e in batch {
            let s = stream(forDevice: e.device)
            if s < 0 { continue }
            let t = e.timeMicros
            if t < lastMicros[s] {
                let device = e.device == EncodedEvent.everyDevice ? "(publishes to every device)" : names[Int(e.device)]
                throw .trace(TraceError(
                    file: file, line: Int(e.line), column: 1,
                    problem: .outOfOrder(
                        device: device,
                        previous: Timestamp.format(micros: lastMicros[s], utcOffsetSeconds: lastOffset[s]),
                        current: Timestamp.format(micros: t, utcOffsetSeconds: e.utcOffsetSeconds))))
            }
            lastMicros[s] = t
            lastOffset[s] = e.utcOffsetSeconds
            // A state row before --from still holds in the window: it is kept.
            if (t < fromMicros && e.kind != .state) || t >= toMicros { continue }
            try spool.append(SpoolRecord(e), to: s)
            kept += 1
            let app = Int(e.app)
            if app >= appFlags.count {
                appFlags.append(contentsOf: repeatElement(0, count: max(app + 1 - appFlags.count, names.count - appFlags.count)))
            }
            switch e.kind {
            case .launch:
                appFlags[app] |= 1
                launches[s] += 1
                if t < firstLaunch[s] { firstLaunch[s] = t }
                lastLaunch[s] = t
                launchCounts[Int64(s) << 32 | Int64(app), default: 0] += 1
                if firstOffset[s] == nil { firstOffset[s] = e.utcOffsetSeconds }
            case .fetch:
                appFlags[app] |= 1
                if firstOffset[s] == nil { firstOffset[s] = e.utcOffsetSeconds }
                if let b = e.bytes { fetchBytes[e.app, default: (0, 0)].sum += Double(b); fetchBytes[e.app]!.count += 1 }
            case .publish:
                appFlags[app] |= 3
            case .state:
                states += 1
            }
        }
    }

    /// Seals the spool and decides the devices and their fetch-enabled apps.
    consuming func finish() -> ScanResult {
        spool.seal()
        // Canonical app ids: ascending byte order of the names.
        var appSymbols: [Int32] = []
        for (i, f) in appFlags.enumerated() where f & 1 != 0 { appSymbols.append(Int32(i)) }
        appSymbols.sort { symbols.name($0).utf8.lexicographicallyPrecedes(symbols.name($1).utf8) }
        var canonical = [Int32](repeating: -1, count: max(symbols.count, appFlags.count))
        var appNameList: [String] = []
        var content: [Bool] = []
        for (c, s) in appSymbols.enumerated() {
            canonical[Int(s)] = Int32(c)
            appNameList.append(symbols.name(s))
            content.append(appFlags[Int(s)] & 2 != 0)
        }
        // Launch counts per stream, by canonical app.
        var perStream: [[(app: Int32, count: Int32)]] = Array(repeating: [], count: spool.streamCount)
        for (key, n) in launchCounts {
            perStream[Int(key >> 32)].append((canonical[Int(key & 0xffff_ffff)], n))
        }
        var devices: [ScannedDevice] = []
        for s in 0..<spool.streamCount where streamDevice[s] != EncodedEvent.everyDevice && launches[s] > 0 {
            let ranked = perStream[s].sorted { $0.count != $1.count ? $0.count > $1.count : $0.app < $1.app }
            devices.append(ScannedDevice(
                name: symbols.name(streamDevice[s]), stream: s, launches: launches[s],
                firstLaunchMicros: firstLaunch[s], lastLaunchMicros: lastLaunch[s],
                firstOffset: firstOffset[s] ?? 0, apps: ranked.prefix(options.topApps).map(\.app)))
        }
        devices.sort { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
        return ScanResult(
            spool: spool, appNames: appNameList, canonicalApp: canonical, appHasContent: content, devices: devices,
            globalStream: globalStream, inputs: inputs, eventsKept: kept, stateRows: states,
            appMeanBytes: appSymbols.map { s in fetchBytes[s].map { $0.sum / Double($0.count) } })
    }
}
