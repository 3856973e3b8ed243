#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import FetchCastCore
import FetchCastTrace
import SystemPackage

/// One event in the spool: 16 bytes, raw symbols (mapped to canonical ids when read back).
struct SpoolRecord: Sendable, Hashable {
    /// Microseconds since the Unix epoch.
    var timeMicros: Int64
    /// The device's (or publisher's) UTC offset in seconds.
    var utcOffsetSeconds: Int32
    /// App symbol (28 bits) · kind (2 bits) · result (2 bits, 3 = none). A `state` row has no
    /// app: its 28 bits hold its ``ConditionChange`` instead (``conditions``).
    var packed: UInt32

    init(_ e: EncodedEvent) {
        timeMicros = e.timeMicros
        utcOffsetSeconds = e.utcOffsetSeconds
        let high = e.kind == .state ? Self.pack(e.conditions) : UInt32(truncatingIfNeeded: e.app)
        packed = high << 4 | UInt32(e.kind.rawValue) << 2 | UInt32(e.result?.rawValue ?? 3)
    }

    /// The app symbol (not for a `state` row).
    var appSymbol: Int32 { Int32(bitPattern: packed >> 4) }

    /// What a `state` row sets (empty for every other kind).
    var conditions: ConditionChange {
        guard kind == .state else { return ConditionChange() }
        let bits = packed >> 4
        let network = bits & 3, power = (bits >> 2) & 3, battery = (bits >> 4) & 0xff, low = (bits >> 12) & 3
        return ConditionChange(
            network: network == 0 ? nil : NetworkCondition(rawValue: UInt8(network - 1)),
            power: power == 0 ? nil : PowerCondition(rawValue: UInt8(power - 1)),
            battery: battery == 0 ? nil : UInt8(battery - 1),
            lowPower: low == 0 ? nil : low == 2)
    }

    /// 14 bits: network + 1 (2 bits), power + 1 (2), battery + 1 (8), low power (2: 1 off, 2 on); 0 = not set.
    private static func pack(_ c: ConditionChange) -> UInt32 {
        let network = c.network.map { UInt32($0.rawValue) + 1 } ?? 0
        let power = c.power.map { UInt32($0.rawValue) + 1 } ?? 0
        let battery = c.battery.map { UInt32($0) + 1 } ?? 0
        let low: UInt32 = c.lowPower.map { $0 ? 2 : 1 } ?? 0
        return network | power << 2 | battery << 4 | low << 12
    }

    var kind: EventKind { EventKind(rawValue: UInt8((packed >> 2) & 3)) ?? .launch }
    var result: FetchResult? { FetchResult(rawValue: UInt8(packed & 3)) }
}

/// A temporary file holding every replayed event in compact binary form, grouped in blocks per
/// stream (one stream per device, one for publishes to every device), so that pass 2 can read
/// one device's events without scanning the others'.
///
/// Memory is one block buffer per stream (devices × 16 KiB) plus a 12-byte index entry per
/// block written; the file is unlinked as soon as it is created, so it vanishes with the
/// process whatever happens.
///
/// - Complexity: O(1) amortised per appended event; reading a stream is O(its events).
final class Spool: @unchecked Sendable {  // written by one thread until `seal()`, then only read (`pread`): a cursor per worker
    static let blockRecords = 1024
    private let fd: Int32
    private let path: String
    private var fileEnd: Int64 = 0
    /// Per stream: the blocks on disk (offset, count).
    private var blocks: [[(offset: Int64, count: Int32)]] = []
    /// Per stream: the buffer being filled, then the last partial block after ``seal()``.
    private var buffers: [UnsafeMutablePointer<SpoolRecord>] = []
    private var filled: [Int] = []
    private var sealed = false

    /// Creates an empty spool in `directory` (default `$TMPDIR` or `/tmp`).
    init(directory: String? = nil) throws(EvaluationError) {
        let dir = directory.flatMap { $0.isEmpty ? nil : $0 } ?? TemporaryPath.directory
        do {
            (fd, path) = try TemporaryPath.makeFile(in: dir, prefix: "fetchcast-spool-")
        } catch {
            throw .output(path: dir, reason: "cannot create the temporary spool file: \(error.reason) (set TMPDIR to a writable directory)")
        }
        unlink(path)
    }

    deinit {
        close(fd)
        for b in buffers { b.deallocate() }
    }

    /// Adds an empty stream; returns its index.
    func addStream() -> Int {
        blocks.append([])
        buffers.append(UnsafeMutablePointer<SpoolRecord>.allocate(capacity: Self.blockRecords))
        filled.append(0)
        return buffers.count - 1
    }

    /// How many streams there are.
    var streamCount: Int { buffers.count }

    /// Appends one record to a stream.
    @inline(__always)
    func append(_ record: SpoolRecord, to stream: Int) throws(EvaluationError) {
        let n = filled[stream]
        buffers[stream][n] = record
        filled[stream] = n + 1
        if n + 1 == Self.blockRecords { try flush(stream) }
    }

    private func flush(_ stream: Int) throws(EvaluationError) {
        let n = filled[stream]
        let bytes = n * MemoryLayout<SpoolRecord>.stride
        do {
            // Retries an interrupted write and writes on after a short one.
            _ = try FileDescriptor(rawValue: fd).writeAll(
                toAbsoluteOffset: fileEnd, UnsafeRawBufferPointer(start: UnsafeRawPointer(buffers[stream]), count: bytes))
        } catch {
            throw .output(path: path, reason: "cannot write the temporary spool: \(error) (is the disk full? set TMPDIR elsewhere)")
        }
        blocks[stream].append((fileEnd, Int32(n)))
        fileEnd += Int64(bytes)
        filled[stream] = 0
    }

    /// Ends writing: the last partial block of each stream stays in memory for readers.
    func seal() { sealed = true }

    /// Events in a stream.
    func count(of stream: Int) -> Int {
        blocks[stream].reduce(0) { $0 + Int($1.count) } + filled[stream]
    }

    /// A cursor over one stream, from its first event (readers may run on any thread once sealed).
    func cursor(_ stream: Int) -> SpoolCursor {
        precondition(sealed, "seal the spool before reading it")
        return SpoolCursor(fd: fd, path: path, blocks: blocks[stream], tail: buffers[stream], tailCount: filled[stream])
    }
}

/// Reads one stream of a sealed ``Spool`` in order, a block at a time.
final class SpoolCursor {
    private let fd: Int32
    private let path: String
    private let blocks: [(offset: Int64, count: Int32)]
    private let tail: UnsafeMutablePointer<SpoolRecord>
    private let tailCount: Int
    private let buffer: UnsafeMutablePointer<SpoolRecord>
    private var current: UnsafeMutablePointer<SpoolRecord>
    private var blockIndex = 0
    private var position = 0
    private var count = 0
    private var tailDone = false
    /// The first read error, if any (the cursor then ends early).
    private(set) var failure: EvaluationError?

    fileprivate init(fd: Int32, path: String, blocks: [(offset: Int64, count: Int32)], tail: UnsafeMutablePointer<SpoolRecord>, tailCount: Int) {
        self.fd = fd
        self.path = path
        self.blocks = blocks
        self.tail = tail
        self.tailCount = tailCount
        buffer = UnsafeMutablePointer<SpoolRecord>.allocate(capacity: Spool.blockRecords)
        current = buffer
    }

    deinit { buffer.deallocate() }

    /// The next record, or `nil` at the end of the stream.
    @inline(__always)
    func next() -> SpoolRecord? {
        if position < count {
            defer { position += 1 }
            return current[position]
        }
        return refill() ? next() : nil
    }

    /// The next record without consuming it.
    @inline(__always)
    func peek() -> SpoolRecord? {
        if position < count { return current[position] }
        return refill() ? current[position] : nil
    }

    /// The next block of records (valid until the next call), or `nil` at the end.
    func nextBlock() -> UnsafeBufferPointer<SpoolRecord>? {
        guard refill() else { return nil }
        position = count
        return UnsafeBufferPointer(start: current, count: count)
    }

    private func refill() -> Bool {
        position = 0
        if blockIndex < blocks.count {
            let (offset, n) = blocks[blockIndex]
            blockIndex += 1
            let bytes = Int(n) * MemoryLayout<SpoolRecord>.stride
            var done = 0
            while done < bytes {
                // Retries an interrupted read; a short one reads on, an end before `bytes` fails.
                let r: Int
                do {
                    r = try FileDescriptor(rawValue: fd).read(
                        fromAbsoluteOffset: offset + Int64(done),
                        into: UnsafeMutableRawBufferPointer(start: UnsafeMutableRawPointer(buffer) + done, count: bytes - done))
                } catch {
                    failure = .output(path: path, reason: "cannot read back the temporary spool: \(error)")
                    count = 0
                    return false
                }
                if r == 0 {
                    failure = .output(path: path, reason: "cannot read back the temporary spool: it ended early")
                    count = 0
                    return false
                }
                done += r
            }
            current = buffer
            count = Int(n)
            return count > 0
        }
        if !tailDone {
            tailDone = true
            current = tail
            count = tailCount
            return count > 0
        }
        count = 0
        return false
    }
}

/// A value-type view over a ``SpoolCursor`` for hot loops: one block at a time, with no
/// per-record class access.
struct SpoolReader {
    let cursor: SpoolCursor
    private var block = UnsafeBufferPointer<SpoolRecord>(start: nil, count: 0)
    private var index = 0

    init(_ cursor: SpoolCursor) { self.cursor = cursor }

    /// The next record without consuming it.
    @inline(__always)
    mutating func peek() -> SpoolRecord? {
        if index < block.count { return block[index] }
        return refill() ? block[index] : nil
    }

    /// Consumes the record ``peek()`` returned.
    @inline(__always)
    mutating func advance() { index += 1 }

    private mutating func refill() -> Bool {
        index = 0
        while let b = cursor.nextBlock() {
            block = b
            if b.count > 0 { return true }
        }
        block = UnsafeBufferPointer(start: nil, count: 0)
        return false
    }
}
