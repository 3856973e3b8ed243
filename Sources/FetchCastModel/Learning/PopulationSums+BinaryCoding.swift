extension PopulationSums {
    static let formatVersion = 2

    /// The sums in the compact binary form the store keeps: the app names once (in byte order),
    /// then the apps' rates and the pairs by name number, pairs in (trigger, follower) order, so
    /// that equal sums give equal bytes whatever order devices were added in, and a reader can
    /// index the pairs without hashing a name per pair (``PopulationIndex/init(binary:)``).
    /// Pairs whose sums are all zero (what removing a device can leave) are not written: they
    /// say nothing a prior uses.
    public func binaryEncoded() -> [UInt8] {
        let kept = pairs.filter { $0.value.successes != 0 || $0.value.trials != 0 || $0.value.devicesWithSuccesses != 0 }
        var nameSet = Set(apps.keys)
        for pair in kept.keys {
            nameSet.insert(pair.trigger)
            nameSet.insert(pair.follower)
        }
        let names = nameSet.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        var number: [String: Int32] = [:]
        for (i, name) in names.enumerated() { number[name] = Int32(i) }
        var w = BinaryWriter()
        w.int(Self.formatVersion)
        w.int(devices)
        w.double(minimumPairSupport)
        Self.write(all, to: &w)
        w.int(names.count)
        for name in names { w.string(name) }
        let appNumbers = apps.keys.map { number[$0]! }.sorted()
        w.int(appNumbers.count)
        for n in appNumbers {
            w.int32(n)
            Self.write(apps[names[Int(n)]]!, to: &w)
        }
        let numbered = kept.map { (trigger: number[$0.key.trigger]!, follower: number[$0.key.follower]!, sums: $0.value) }
            .sorted { ($0.trigger, $0.follower) < ($1.trigger, $1.follower) }
        w.int(numbered.count)
        for pair in numbered {
            w.int32(pair.trigger)
            w.int32(pair.follower)
            w.double(pair.sums.successes)
            w.double(pair.sums.trials)
            w.int(pair.sums.devicesWithSuccesses)
        }
        return w.bytes
    }

    /// Decodes ``binaryEncoded()`` from bytes it does not keep.
    /// - Throws: ``BinaryReader/Malformed`` for damaged or foreign bytes.
    /// - Complexity: O(size of the sums).
    public init(binary bytes: UnsafeRawBufferPointer) throws {
        try self.init(binary: bytes) { _, _, _ in true }
    }

    /// Decodes ``binaryEncoded()``, keeping only the pairs `keep` accepts (trigger and follower
    /// name numbers, sums), and calls nothing per name but to read it.
    init(binary bytes: UnsafeRawBufferPointer, names: inout [String], keep: (Int32, Int32, PairSums) -> Bool) throws {
        var r = BinaryReader(bytes)
        guard try r.int() == Self.formatVersion else { throw BinaryReader.Malformed() }
        let devices = try r.int()
        self.init(minimumPairSupport: try r.double())
        self.devices = devices
        all = try Self.readRates(&r)
        let nameCount = try r.count()
        names.reserveCapacity(nameCount)
        for _ in 0..<nameCount { names.append(try r.string()) }
        func name(_ n: Int32) throws -> String {
            guard n >= 0, Int(n) < names.count else { throw BinaryReader.Malformed() }
            return names[Int(n)]
        }
        let appCount = try r.count()
        apps.reserveCapacity(appCount)
        for _ in 0..<appCount {
            let n = try r.int32()
            apps[try name(n)] = try Self.readRates(&r)
        }
        for _ in 0..<(try r.count()) {
            let trigger = try r.int32(), follower = try r.int32()
            let sums = PairSums(successes: try r.double(), trials: try r.double(), devicesWithSuccesses: try r.int())
            guard keep(trigger, follower, sums) else { continue }
            pairs[NamePair(trigger: try name(trigger), follower: try name(follower))] = sums
        }
        guard r.offset == bytes.count else { throw BinaryReader.Malformed() }
    }

    private init(binary bytes: UnsafeRawBufferPointer, keep: (Int32, Int32, PairSums) -> Bool) throws {
        var names: [String] = []
        try self.init(binary: bytes, names: &names, keep: keep)
    }

    private static func write(_ rates: Rates, to w: inout BinaryWriter) {
        w.doubles(rates.sessions)
        w.doubles(rates.exposure)
        w.int(rates.devices)
    }

    private static func readRates(_ r: inout BinaryReader) throws -> Rates {
        let rates = Rates(sessions: try r.doubles(), exposure: try r.doubles(), devices: try r.int())
        guard rates.sessions.count == HourOfWeek.count, rates.exposure.count == HourOfWeek.count else { throw BinaryReader.Malformed() }
        return rates
    }
}

extension BinaryWriter {
    /// A byte count, then the UTF-8 bytes.
    mutating func string(_ s: String) {
        int(s.utf8.count)
        bytes.append(contentsOf: s.utf8)
    }
}

extension BinaryReader {
    mutating func string() throws -> String { String(decoding: try slice(try count()), as: UTF8.self) }
}
