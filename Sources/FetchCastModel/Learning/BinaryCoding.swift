import Foundation

/// A compact little-endian binary form for persisted model state: `predict` must load a
/// device's model in well under a millisecond, which JSON cannot do for ~10⁵ numbers.
package struct BinaryWriter {
    /// The bytes written so far.
    package internal(set) var bytes: [UInt8] = []

    /// Creates an empty writer.
    package init() {}

    @inline(__always)
    mutating func raw<T>(_ value: T) {
        withUnsafeBytes(of: value) { bytes.append(contentsOf: $0) }
    }

    package mutating func double(_ v: Double) { raw(v.bitPattern.littleEndian) }
    package mutating func int(_ v: Int) { raw(Int64(v).littleEndian) }
    package mutating func int32(_ v: Int32) { raw(v.littleEndian) }
    package mutating func uint64(_ v: UInt64) { raw(v.littleEndian) }
    package mutating func bool(_ v: Bool) { bytes.append(v ? 1 : 0) }
    package mutating func optionalDouble(_ v: Double?) {
        bool(v != nil)
        if let v { double(v) }
    }
    package mutating func doubles(_ a: [Double]) {
        int(a.count)
        #if _endian(little)
        a.withUnsafeBytes { bytes.append(contentsOf: $0) }  // the same bytes, in one copy
        #else
        for v in a { double(v) }
        #endif
    }
    package mutating func optionalInt(_ v: Int?) {
        bool(v != nil)
        if let v { int(v) }
    }
    /// A count, then the bytes.
    package mutating func blob(_ b: [UInt8]) {
        int(b.count)
        bytes += b
    }
    /// A count, then (key, value) pairs in ascending key order.
    mutating func pairs(_ p: PairWeights) {
        let sorted = p.sortedPairs()
        int(sorted.count)
        for (k, v) in sorted { uint64(k); double(v) }
    }
}

/// Reads what ``BinaryWriter`` wrote, straight from the bytes (no intermediate copies): numbers
/// are loaded unaligned, arrays of doubles are one bulk copy each.
package struct BinaryReader {
    let bytes: UnsafeRawBufferPointer
    package internal(set) var offset = 0

    /// Wraps bytes that outlive the reader.
    package init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    /// Thrown for truncated or malformed state.
    package struct Malformed: Error, CustomStringConvertible {
        package var description: String { "the stored model state is damaged; it will be rebuilt from the events" }
    }

    @inline(__always)
    mutating func raw<T: FixedWidthInteger>(_: T.Type) throws -> T {
        let size = MemoryLayout<T>.size
        guard size <= bytes.count - offset else { throw Malformed() }
        let v = bytes.loadUnaligned(fromByteOffset: offset, as: T.self)
        offset += size
        return T(littleEndian: v)
    }

    package mutating func double() throws -> Double { Double(bitPattern: try raw(UInt64.self)) }
    package mutating func int() throws -> Int { Int(try raw(Int64.self)) }
    package mutating func int32() throws -> Int32 { try raw(Int32.self) }
    package mutating func uint64() throws -> UInt64 { try raw(UInt64.self) }
    package mutating func bool() throws -> Bool {
        guard offset < bytes.count else { throw Malformed() }
        offset += 1
        return bytes[offset - 1] != 0
    }
    package mutating func optionalDouble() throws -> Double? { try bool() ? try double() : nil }
    package mutating func optionalInt() throws -> Int? { try bool() ? try int() : nil }
    /// What ``BinaryWriter/blob(_:)`` wrote (valid while the bytes are).
    package mutating func blob() throws -> UnsafeRawBufferPointer { try slice(try count()) }
    package mutating func count() throws -> Int {
        let n = try int()
        guard n >= 0, n <= bytes.count else { throw Malformed() }
        return n
    }
    /// `n` bytes, advancing past them.
    package mutating func slice(_ n: Int) throws -> UnsafeRawBufferPointer {
        guard n <= bytes.count - offset else { throw Malformed() }
        defer { offset += n }
        return UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + n)])
    }
    package mutating func doubles() throws -> [Double] {
        let n = try count()
        let src = try slice(n * 8)
        let out = [Double](unsafeUninitializedCapacity: n) { buffer, initialized in
            UnsafeMutableRawBufferPointer(buffer).copyMemory(from: src)
            initialized = n
        }
        #if _endian(big)
        return out.map { Double(bitPattern: UInt64(littleEndian: $0.bitPattern)) }
        #else
        return out
        #endif
    }
    /// What ``BinaryWriter/pairs(_:)`` wrote, straight into the sorted form (no hashing).
    mutating func pairs() throws -> PairWeights {
        let n = try count()
        let src = try slice(n * 16)
        let keys = [UInt64](unsafeUninitializedCapacity: n) { buffer, initialized in
            for i in 0..<n { buffer[i] = UInt64(littleEndian: src.loadUnaligned(fromByteOffset: i * 16, as: UInt64.self)) }
            initialized = n
        }
        let values = [Double](unsafeUninitializedCapacity: n) { buffer, initialized in
            for i in 0..<n {
                buffer[i] = Double(bitPattern: UInt64(littleEndian: src.loadUnaligned(fromByteOffset: i * 16 + 8, as: UInt64.self)))
            }
            initialized = n
        }
        guard let p = PairWeights(sortedKeys: keys, values: values) else { throw Malformed() }
        return p
    }
}

extension DeviceModel {
    /// 5: with the pickup log (``PickupLog``); 4 had the habit log (``HabitLog``) but no pickup
    /// log. A state of an older format is refused, and the store folds the device again.
    static let formatVersion = 5

    /// The model in the compact binary form the store keeps.
    package func binaryEncoded() throws -> [UInt8] {
        var w = BinaryWriter()
        w.int(Self.formatVersion)
        w.int(0)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys  // the same model must give the same bytes
        let configurationJSON = try encoder.encode(configuration)
        w.int(configurationJSON.count)
        w.bytes.append(contentsOf: configurationJSON)
        w.double(scale.reference)
        w.double(scale.rate)
        w.doubles(exposure)
        w.doubles(sessionsAll)
        w.doubles(gapsAll)
        w.doubles(responseTrialsAll)
        w.doubles(responseSuccessesAll)
        let appKeys = apps.keys.sorted()
        w.int(appKeys.count)
        for k in appKeys {
            let s = apps[k]!
            w.int32(k)
            w.doubles(s.sessions)
            w.double(s.sessionTotal)
            w.double(s.launchTotal)
            w.optionalDouble(s.lastLaunch)
            w.optionalDouble(s.lastRefresh)
            w.optionalDouble(s.lastFetch)
            w.doubles(s.gaps)
            w.doubles(s.responseTrials)
            w.doubles(s.responseSuccesses)
        }
        w.int(triggerTrials.count)
        for k in triggerTrials.keys.sorted() { w.int32(k); w.double(triggerTrials[k]!) }
        w.pairs(pairSuccesses)
        w.int(recent.count)
        for r in recent { w.double(r.time); w.int32(r.app); w.double(r.weight); w.int(r.idle) }
        let contentKeys = content.keys.sorted()
        w.int(contentKeys.count)
        for k in contentKeys {
            let c = content[k]!
            w.int32(k)
            w.doubles(c.events)
            w.doubles(c.exposure)
            w.bool(c.fromPublishes)
            w.optionalDouble(c.lastPublish)
            w.int(c.newData)
            w.int(c.noData)
        }
        w.optionalDouble(lastLaunchAny)
        w.optionalDouble(lastEventTime)
        w.int32(lastOffset)
        w.int(eventCount)
        w.optionalDouble(fetchDay.map(Double.init))
        w.int(fetchesOnFetchDay)
        habitLog.write(to: &w)
        pickupLog.write(to: &w)
        return w.bytes
    }

    /// The default configuration as ``binaryEncoded()`` writes it: decoded without JSON.
    private static let defaultConfigurationJSON: [UInt8] = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return (try? Array(encoder.encode(ModelConfiguration()))) ?? []
    }()

    /// Decodes ``binaryEncoded()``.
    /// - Throws: ``BinaryReader/Malformed`` for damaged or foreign bytes.
    package init(binary bytes: [UInt8]) throws {
        self = try bytes.withUnsafeBytes { try DeviceModel(binary: $0) }
    }

    /// Decodes ``binaryEncoded()`` from bytes it does not keep (e.g. a blob SQLite still owns).
    /// - Throws: ``BinaryReader/Malformed`` for damaged or foreign bytes.
    /// - Complexity: O(size of the state): bulk copies, no hashing of co-usage pairs.
    package init(binary bytes: UnsafeRawBufferPointer) throws {
        var r = BinaryReader(bytes)
        guard try r.int() == Self.formatVersion else { throw BinaryReader.Malformed() }
        _ = try r.int()
        let json = try r.slice(try r.count())
        let configuration = json.elementsEqual(Self.defaultConfigurationJSON)
            ? ModelConfiguration()
            : try JSONDecoder().decode(ModelConfiguration.self, from: Data(json))
        self.init(configuration: configuration)
        scale = DecayScale(reference: try r.double(), rate: try r.double())
        exposure = try r.doubles()
        sessionsAll = try r.doubles()
        gapsAll = try r.doubles()
        responseTrialsAll = try r.doubles()
        responseSuccessesAll = try r.doubles()
        let appCount = try r.count()
        apps.reserveCapacity(appCount)
        for _ in 0..<appCount {
            let k = try r.int32()
            // Memberwise, in the order written: no default arrays allocated only to be replaced.
            apps[k] = AppState(
                sessions: try r.doubles(), sessionTotal: try r.double(), launchTotal: try r.double(),
                lastLaunch: try r.optionalDouble(), lastRefresh: try r.optionalDouble(), lastFetch: try r.optionalDouble(),
                gaps: try r.doubles(),
                responseTrials: try r.doubles(), responseSuccesses: try r.doubles())
        }
        let triggerCount = try r.count()
        triggerTrials.reserveCapacity(triggerCount)
        for _ in 0..<triggerCount { let k = try r.int32(); triggerTrials[k] = try r.double() }
        pairSuccesses = try r.pairs()
        for _ in 0..<(try r.count()) {
            recent.append(RecentLaunch(time: try r.double(), app: try r.int32(), weight: try r.double(), idle: try r.int()))
        }
        for _ in 0..<(try r.count()) {
            let k = try r.int32()
            content[k] = ContentState(
                events: try r.doubles(), exposure: try r.doubles(), fromPublishes: try r.bool(),
                lastPublish: try r.optionalDouble(), newData: try r.int(), noData: try r.int())
        }
        lastLaunchAny = try r.optionalDouble()
        lastEventTime = try r.optionalDouble()
        lastOffset = try r.int32()
        eventCount = try r.int()
        fetchDay = try r.optionalDouble().map { Int($0) }
        fetchesOnFetchDay = try r.int()
        habitLog = try HabitLog(reading: &r)
        pickupLog = try PickupLog(reading: &r)
        guard r.offset == bytes.count else { throw BinaryReader.Malformed() }
    }
}

extension HabitLog {
    /// Writes the log: per app (in app order) its session times, then the days, then the last launch.
    func write(to w: inout BinaryWriter) {
        w.int(sessions.count)
        for app in sessions.keys.sorted() {
            w.int32(app)
            w.doubles(sessions[app]!)
        }
        w.int(days.count)
        for d in days { w.int32(d) }
        w.optionalDouble(lastLocal)
    }

    /// Reads what ``write(to:)`` wrote.
    init(reading r: inout BinaryReader) throws {
        self.init()
        for _ in 0..<(try r.count()) {
            let app = try r.int32()
            sessions[app] = try r.doubles()
        }
        for _ in 0..<(try r.count()) { days.append(try r.int32()) }
        lastLocal = try r.optionalDouble()
    }
}

extension PickupLog {
    /// Writes the log: each pickup's local time, silence before it and first-session apps, oldest first.
    func write(to w: inout BinaryWriter) {
        w.int(pickups.count)
        for p in pickups {
            w.double(p.local)
            w.double(p.silence)
            w.int(p.apps.count)
            for (app, after) in zip(p.apps, p.after) { w.int32(app); w.double(after) }
        }
    }

    /// Reads what ``write(to:)`` wrote.
    init(reading r: inout BinaryReader) throws {
        self.init()
        for _ in 0..<(try r.count()) {
            let local = try r.double(), silence = try r.double()
            var apps: [Int32] = [], after: [Double] = []
            for _ in 0..<(try r.count()) { apps.append(try r.int32()); after.append(try r.double()) }
            pickups.append(Pickup(local: local, silence: silence, apps: apps, after: after))
        }
        recountLongSilence()
    }
}

extension DevicePrior {
    /// The prior in the compact binary form the store keeps beside each device's model.
    package func binaryEncoded() -> [UInt8] {
        var w = BinaryWriter()
        w.doubles(globalRates)
        w.int(appRates.count)
        for k in appRates.keys.sorted() { w.int32(k); w.doubles(appRates[k]!) }
        w.pairs(pairs)
        return w.bytes
    }

    /// Decodes ``binaryEncoded()``.
    package init(binary bytes: [UInt8]) throws {
        self = try bytes.withUnsafeBytes { try DevicePrior(binary: $0) }
    }

    /// Decodes ``binaryEncoded()`` from bytes it does not keep.
    package init(binary bytes: UnsafeRawBufferPointer) throws {
        var r = BinaryReader(bytes)
        self = .none
        globalRates = try r.doubles()
        let rateCount = try r.count()
        appRates.reserveCapacity(rateCount)
        for _ in 0..<rateCount { let k = try r.int32(); appRates[k] = try r.doubles() }
        pairs = try r.pairs()
        guard r.offset == bytes.count else { throw BinaryReader.Malformed() }
    }
}
