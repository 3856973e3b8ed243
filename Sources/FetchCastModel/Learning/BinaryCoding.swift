import Foundation

/// A compact little-endian binary form for persisted model state: `predict` must load a
/// device's model in well under a millisecond, which JSON cannot do for ~10⁵ numbers.
public struct BinaryWriter {
    /// The bytes written so far.
    public internal(set) var bytes: [UInt8] = []

    /// Creates an empty writer.
    public init() {}

    @inline(__always)
    mutating func raw<T>(_ value: T) {
        withUnsafeBytes(of: value) { bytes.append(contentsOf: $0) }
    }

    mutating func double(_ v: Double) { raw(v.bitPattern.littleEndian) }
    mutating func int(_ v: Int) { raw(Int64(v).littleEndian) }
    mutating func int32(_ v: Int32) { raw(v.littleEndian) }
    mutating func uint64(_ v: UInt64) { raw(v.littleEndian) }
    mutating func bool(_ v: Bool) { bytes.append(v ? 1 : 0) }
    mutating func optionalDouble(_ v: Double?) {
        bool(v != nil)
        if let v { double(v) }
    }
    mutating func doubles(_ a: [Double]) {
        int(a.count)
        for v in a { double(v) }
    }
}

/// Reads what ``BinaryWriter`` wrote.
public struct BinaryReader {
    let bytes: [UInt8]
    var offset = 0

    /// Wraps bytes.
    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// Thrown for truncated or malformed state.
    public struct Malformed: Error, CustomStringConvertible {
        public var description: String { "the stored model state is damaged; it will be rebuilt from the events" }
    }

    @inline(__always)
    mutating func raw<T: FixedWidthInteger>(_: T.Type) throws -> T {
        let size = MemoryLayout<T>.size
        guard offset + size <= bytes.count else { throw Malformed() }
        var v: T = 0
        withUnsafeMutableBytes(of: &v) { dst in
            bytes.withUnsafeBytes { src in dst.copyMemory(from: UnsafeRawBufferPointer(rebasing: src[offset..<(offset + size)])) }
        }
        offset += size
        return T(littleEndian: v)
    }

    mutating func double() throws -> Double { Double(bitPattern: try raw(UInt64.self)) }
    mutating func int() throws -> Int { Int(try raw(Int64.self)) }
    mutating func int32() throws -> Int32 { try raw(Int32.self) }
    mutating func uint64() throws -> UInt64 { try raw(UInt64.self) }
    mutating func bool() throws -> Bool {
        guard offset < bytes.count else { throw Malformed() }
        offset += 1
        return bytes[offset - 1] != 0
    }
    mutating func optionalDouble() throws -> Double? { try bool() ? try double() : nil }
    mutating func count() throws -> Int {
        let n = try int()
        guard n >= 0, n <= bytes.count else { throw Malformed() }
        return n
    }
    mutating func doubles() throws -> [Double] {
        let n = try count()
        guard offset + n * 8 <= bytes.count else { throw Malformed() }
        var out = [Double](repeating: 0, count: n)
        out.withUnsafeMutableBytes { dst in
            bytes.withUnsafeBytes { src in dst.copyMemory(from: UnsafeRawBufferPointer(rebasing: src[offset..<(offset + n * 8)])) }
        }
        offset += n * 8
        #if _endian(big)
        out = out.map { Double(bitPattern: UInt64(littleEndian: $0.bitPattern)) }
        #endif
        return out
    }
}

extension DeviceModel {
    static let formatVersion = 2

    /// The model in the compact binary form the store keeps.
    public func binaryEncoded() throws -> [UInt8] {
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
            w.doubles(s.gaps)
            w.doubles(s.responseTrials)
            w.doubles(s.responseSuccesses)
        }
        w.int(triggerTrials.count)
        for k in triggerTrials.keys.sorted() { w.int32(k); w.double(triggerTrials[k]!) }
        w.int(pairSuccesses.count)
        for k in pairSuccesses.keys.sorted() { w.uint64(k); w.double(pairSuccesses[k]!) }
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
        return w.bytes
    }

    /// Decodes ``binaryEncoded()``.
    /// - Throws: ``BinaryReader/Malformed`` for damaged or foreign bytes.
    public init(binary bytes: [UInt8]) throws {
        var r = BinaryReader(bytes)
        guard try r.int() == Self.formatVersion else { throw BinaryReader.Malformed() }
        _ = try r.int()
        let n = try r.count()
        guard r.offset + n <= bytes.count else { throw BinaryReader.Malformed() }
        let configuration = try JSONDecoder().decode(ModelConfiguration.self, from: Data(bytes[r.offset..<(r.offset + n)]))
        r.offset += n
        self.init(configuration: configuration)
        scale = DecayScale(reference: try r.double(), rate: try r.double())
        exposure = try r.doubles()
        sessionsAll = try r.doubles()
        gapsAll = try r.doubles()
        responseTrialsAll = try r.doubles()
        responseSuccessesAll = try r.doubles()
        for _ in 0..<(try r.count()) {
            let k = try r.int32()
            var s = AppState()
            s.sessions = try r.doubles()
            s.sessionTotal = try r.double()
            s.launchTotal = try r.double()
            s.lastLaunch = try r.optionalDouble()
            s.lastRefresh = try r.optionalDouble()
            s.gaps = try r.doubles()
            s.responseTrials = try r.doubles()
            s.responseSuccesses = try r.doubles()
            apps[k] = s
        }
        for _ in 0..<(try r.count()) { let k = try r.int32(); triggerTrials[k] = try r.double() }
        for _ in 0..<(try r.count()) { let k = try r.uint64(); pairSuccesses[k] = try r.double() }
        for _ in 0..<(try r.count()) {
            recent.append(RecentLaunch(time: try r.double(), app: try r.int32(), weight: try r.double(), idle: try r.int()))
        }
        for _ in 0..<(try r.count()) {
            let k = try r.int32()
            var c = ContentState()
            c.events = try r.doubles()
            c.exposure = try r.doubles()
            c.fromPublishes = try r.bool()
            c.lastPublish = try r.optionalDouble()
            c.newData = try r.int()
            c.noData = try r.int()
            content[k] = c
        }
        lastLaunchAny = try r.optionalDouble()
        lastEventTime = try r.optionalDouble()
        lastOffset = try r.int32()
        eventCount = try r.int()
        guard r.offset == bytes.count else { throw BinaryReader.Malformed() }
    }
}

extension DevicePrior {
    /// The prior in the compact binary form the store keeps beside each device's model.
    public func binaryEncoded() -> [UInt8] {
        var w = BinaryWriter()
        w.doubles(globalRates)
        w.int(appRates.count)
        for k in appRates.keys.sorted() { w.int32(k); w.doubles(appRates[k]!) }
        w.int(pairs.count)
        for k in pairs.keys.sorted() { w.uint64(k); w.double(pairs[k]!) }
        return w.bytes
    }

    /// Decodes ``binaryEncoded()``.
    public init(binary bytes: [UInt8]) throws {
        var r = BinaryReader(bytes)
        self = .none
        globalRates = try r.doubles()
        for _ in 0..<(try r.count()) { let k = try r.int32(); appRates[k] = try r.doubles() }
        for _ in 0..<(try r.count()) { let k = try r.uint64(); pairs[k] = try r.double() }
        guard r.offset == bytes.count else { throw BinaryReader.Malformed() }
    }
}
