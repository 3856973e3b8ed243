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

    /// Appends one event's row (the columns of ``eventColumns``): a `state` row's conditions,
    /// any other row's result, bytes and duration, the rest NULL, as the SQLite store writes them.
    static func appendEvent(_ e: EncodedEvent, device: Int64, file: Int64, app: Int64, to buffer: inout ByteBuffer) {
        append(device, to: &buffer)
        tab(&buffer); append(file, to: &buffer)
        tab(&buffer); append(e.line, to: &buffer)
        tab(&buffer); append(e.timeMicros, to: &buffer)
        tab(&buffer); append(Int64(e.utcOffsetSeconds), to: &buffer)
        tab(&buffer); append(app, to: &buffer)
        tab(&buffer); append(Int64(e.kind.rawValue), to: &buffer)
        if e.kind == .state {
            let c = e.conditions
            for value in [nil, nil, nil, c.network.map { Int64($0.rawValue) }, c.power.map { Int64($0.rawValue) },
                          c.battery.map { Int64($0) }, c.lowPower.map { $0 ? 1 : 0 }] as [Int64?] {
                tab(&buffer); append(value, to: &buffer)
            }
        } else {
            tab(&buffer); append(e.result.map { Int64($0.rawValue) }, to: &buffer)
            tab(&buffer); append(e.bytes, to: &buffer)
            tab(&buffer); append(e.durationMs, to: &buffer)
            buffer.writeStaticString("\t\\N\t\\N\t\\N\t\\N")
        }
        buffer.writeInteger(UInt8(ascii: "\n"))
    }

    /// Appends a row of integers.
    static func appendRow(_ values: [Int64], to buffer: inout ByteBuffer) {
        for (i, v) in values.enumerated() {
            if i > 0 { tab(&buffer) }
            append(v, to: &buffer)
        }
        buffer.writeInteger(UInt8(ascii: "\n"))
    }

    @inline(__always)
    private static func tab(_ buffer: inout ByteBuffer) { buffer.writeInteger(UInt8(ascii: "\t")) }

    @inline(__always)
    private static func append(_ value: Int64?, to buffer: inout ByteBuffer) {
        guard let value else {
            buffer.writeStaticString("\\N")
            return
        }
        append(value, to: &buffer)
    }

    /// Decimal digits, without a `String` in between.
    @inline(__always)
    private static func append(_ value: Int64, to buffer: inout ByteBuffer) {
        if value == 0 {
            buffer.writeInteger(UInt8(ascii: "0"))
            return
        }
        var magnitude = value.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes, room for 20 digits
        var count = 0
        withUnsafeMutableBytes(of: &digits) { raw in
            while magnitude > 0 {
                raw[23 - count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            }
            if value < 0 { buffer.writeInteger(UInt8(ascii: "-")) }
            buffer.writeBytes(UnsafeRawBufferPointer(rebasing: raw[(24 - count)...]))
        }
    }
}
