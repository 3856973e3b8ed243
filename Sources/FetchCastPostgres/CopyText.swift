import FetchCastCore
import NIOCore

/// Rows in `COPY … FROM STDIN` text format: integers only (names go in as bound arrays), tab
/// between columns, `\N` for NULL, a newline after each row. No value is ever SQL.
enum CopyText {
    /// The columns of `event_log` an append streams, in order.
    static let eventColumns = [
        "device_id", "file_id", "line", "time_us", "utc_offset_s", "app_id", "kind", "result", "bytes", "duration_ms",
        "network", "power", "battery", "low_power",
    ]

    /// The most bytes one row of ``appendEvent(_:device:file:app:to:)`` takes: 14 columns of
    /// at most 20 digits and a sign, each followed by a tab or the newline.
    private static let maxEventRowBytes = 14 * 22

    /// Appends one event's row (the columns of ``eventColumns``): a `state` row's conditions,
    /// any other row's result, bytes and duration, the rest NULL, as the SQLite store writes them.
    static func appendEvent(_ e: EncodedEvent, device: Int64, file: Int64, app: Int64, to buffer: inout ByteBuffer) {
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: maxEventRowBytes) { raw in
            var row = RowWriter(base: raw.baseAddress!.assumingMemoryBound(to: UInt8.self))
            row.integer(device)
            row.tab(); row.integer(file)
            row.tab(); row.integer(e.line)
            row.tab(); row.integer(e.timeMicros)
            row.tab(); row.integer(Int64(e.utcOffsetSeconds))
            row.tab(); row.integer(app)
            row.tab(); row.integer(Int64(e.kind.rawValue))
            if e.kind == .state {
                let c = e.conditions
                row.tab(); row.null()
                row.tab(); row.null()
                row.tab(); row.null()
                row.tab(); row.integer(c.network.map { Int64($0.rawValue) })
                row.tab(); row.integer(c.power.map { Int64($0.rawValue) })
                row.tab(); row.integer(c.battery.map { Int64($0) })
                row.tab(); row.integer(c.lowPower.map { $0 ? 1 : 0 })
            } else {
                row.tab(); row.integer(e.result.map { Int64($0.rawValue) })
                row.tab(); row.integer(e.bytes)
                row.tab(); row.integer(e.durationMs)
                for _ in 0..<4 {
                    row.tab(); row.null()
                }
            }
            row.byte(UInt8(ascii: "\n"))
            return row.count
        }
    }

    /// Appends a row of integers.
    static func appendRow(_ values: [Int64], to buffer: inout ByteBuffer) {
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: max(values.count, 1) * 22) { raw in
            var row = RowWriter(base: raw.baseAddress!.assumingMemoryBound(to: UInt8.self))
            for (i, v) in values.enumerated() {
                if i > 0 { row.tab() }
                row.integer(v)
            }
            row.byte(UInt8(ascii: "\n"))
            return row.count
        }
    }

    /// Writes a row's bytes into memory the caller reserved (room for every column at its
    /// widest), without a bounds check per byte.
    private struct RowWriter {
        let base: UnsafeMutablePointer<UInt8>
        var count = 0

        @inline(__always)
        mutating func byte(_ b: UInt8) {
            base[count] = b
            count += 1
        }

        @inline(__always)
        mutating func tab() { byte(UInt8(ascii: "\t")) }

        @inline(__always)
        mutating func null() {
            byte(UInt8(ascii: "\\"))
            byte(UInt8(ascii: "N"))
        }

        @inline(__always)
        mutating func integer(_ value: Int64?) {
            if let value { integer(value) } else { null() }
        }

        /// Decimal digits, without a `String` in between.
        @inline(__always)
        mutating func integer(_ value: Int64) {
            if value < 0 { byte(UInt8(ascii: "-")) }
            var magnitude = value.magnitude
            // The digits, last first, then reversed in place.
            let first = count
            repeat {
                byte(UInt8(ascii: "0") + UInt8(magnitude % 10))
                magnitude /= 10
            } while magnitude > 0
            var lo = first, hi = count - 1
            while lo < hi {
                let t = base[lo]
                base[lo] = base[hi]
                base[hi] = t
                lo += 1
                hi -= 1
            }
        }
    }
}
