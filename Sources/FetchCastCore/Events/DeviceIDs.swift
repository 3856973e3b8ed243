/// A set of device ids compared byte for byte (their UTF-8), as a trace's rows and the store name
/// devices: `--devices`, `--prior-devices` and the library's device selections.
///
/// Swift's `String` equality is Unicode canonical equivalence, so a `Set<String>` would take
/// "é" written as one code point and "e" + U+0301 for one device, and select both of two devices
/// whose ids differ only so; a trace and the store keep them apart. Iterates in ascending byte
/// order of the ids, like `devices.csv`.
public struct DeviceIDs: Sendable, Hashable, Sequence, ExpressibleByArrayLiteral {
    private var keys: Set<[UInt8]>

    /// No devices.
    public init() { keys = [] }

    /// These ids (an id given twice, byte for byte, counts once).
    public init<S: Sequence>(_ ids: S) where S.Element == String {
        keys = Set(ids.map { Array($0.utf8) })
    }

    public init(arrayLiteral ids: String...) { self.init(ids) }

    /// Whether `id` is one of the set, byte for byte.
    public func contains(_ id: String) -> Bool { keys.contains(Array(id.utf8)) }

    /// The ids' UTF-8 bytes, unordered: for lookups in tables keyed by bytes, without decoding
    /// and sorting as iterating does.
    package var utf8: Set<[UInt8]> { keys }

    /// Adds `id`; `false` when the same bytes were already there.
    @discardableResult
    public mutating func insert(_ id: String) -> Bool { keys.insert(Array(id.utf8)).inserted }

    /// How many distinct ids.
    public var count: Int { keys.count }

    /// Whether there are none.
    public var isEmpty: Bool { keys.isEmpty }

    /// The ids in ascending byte order.
    public func makeIterator() -> IndexingIterator<[String]> {
        keys.sorted { $0.lexicographicallyPrecedes($1) }.map { String(decoding: $0, as: UTF8.self) }.makeIterator()
    }
}
