extension PopulationSums {
    static let formatVersion = 1

    /// The sums in the compact binary form the store keeps (apps and pairs in byte order of
    /// their names): equal sums give equal bytes, whatever order devices were added in.
    /// Pairs whose sums are all zero (what removing a device can leave) are not written: they
    /// say nothing a prior uses.
    public func binaryEncoded() -> [UInt8] {
        var w = BinaryWriter()
        w.int(Self.formatVersion)
        w.int(devices)
        w.double(minimumPairSupport)
        Self.write(all, to: &w)
        let names = apps.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        w.int(names.count)
        for name in names {
            w.string(name)
            Self.write(apps[name]!, to: &w)
        }
        let kept = pairs.filter { $0.value.successes != 0 || $0.value.trials != 0 || $0.value.devicesWithSuccesses != 0 }
        let sorted = kept.keys.sorted {
            $0.trigger == $1.trigger
                ? $0.follower.utf8.lexicographicallyPrecedes($1.follower.utf8) : $0.trigger.utf8.lexicographicallyPrecedes($1.trigger.utf8)
        }
        w.int(sorted.count)
        for pair in sorted {
            let sums = kept[pair]!
            w.string(pair.trigger)
            w.string(pair.follower)
            w.double(sums.successes)
            w.double(sums.trials)
            w.int(sums.devicesWithSuccesses)
        }
        return w.bytes
    }

    /// Decodes ``binaryEncoded()`` from bytes it does not keep.
    /// - Throws: ``BinaryReader/Malformed`` for damaged or foreign bytes.
    /// - Complexity: O(size of the sums).
    public init(binary bytes: UnsafeRawBufferPointer) throws {
        var r = BinaryReader(bytes)
        guard try r.int() == Self.formatVersion else { throw BinaryReader.Malformed() }
        let devices = try r.int()
        self.init(minimumPairSupport: try r.double())
        self.devices = devices
        all = try Self.readRates(&r)
        let appCount = try r.count()
        apps.reserveCapacity(appCount)
        for _ in 0..<appCount {
            let name = try r.string()
            apps[name] = try Self.readRates(&r)
        }
        let pairCount = try r.count()
        pairs.reserveCapacity(pairCount)
        for _ in 0..<pairCount {
            let pair = NamePair(trigger: try r.string(), follower: try r.string())
            pairs[pair] = PairSums(successes: try r.double(), trials: try r.double(), devicesWithSuccesses: try r.int())
        }
        guard r.offset == bytes.count else { throw BinaryReader.Malformed() }
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
