import CZlib

/// A `TextOutputStream` that gzip-compresses into a ``FileSink`` (for `*.csv.gz` outputs and
/// generated benchmark traces).
public final class GzipSink: TextOutputStream {
    private let sink: FileSink
    private var stream = z_stream()
    private var input: [UInt8] = []
    private let output: UnsafeMutablePointer<UInt8>
    private let outputSize = 1 << 16
    private var finished = false

    /// Creates a compressed file (level 1–9, default 6 like `gzip`), truncating it: for scratch
    /// files; outputs a user names go through ``init(into:level:)``.
    public convenience init(path: String, level: Int32 = 6) throws(TraceError) {
        try self.init(sink: try FileSink(path: path), path: path, level: level)
    }

    /// Compresses into an output file (commit it after ``finish()``).
    public convenience init(into file: OutputFile, level: Int32 = 6) throws(TraceError) {
        try self.init(sink: file.sink, path: file.path, level: level)
    }

    private init(sink: FileSink, path: String, level: Int32) throws(TraceError) {
        self.sink = sink
        output = UnsafeMutablePointer<UInt8>.allocate(capacity: outputSize)
        guard fetchcast_deflateInit2(&stream, level, 15 + 16) == Z_OK else {
            output.deallocate()
            throw TraceError(file: path, line: 0, column: 0, problem: .cannotWrite("cannot start the gzip encoder"))
        }
        input.reserveCapacity(1 << 16)
    }

    deinit {
        finish()
        deflateEnd(&stream)
        output.deallocate()
    }

    /// `errno` of a failed write to the file, if one failed.
    public var failure: Int32? { sink.failure }

    /// Writes text.
    public func write(_ string: String) {
        input.append(contentsOf: string.utf8)
        if input.count >= 1 << 16 { compress(flush: Z_NO_FLUSH) }
    }

    /// Compresses what is pending and writes the gzip trailer; later writes are ignored.
    /// - Returns: false when writing the file failed.
    @discardableResult
    public func finish() -> Bool {
        if finished { return sink.failure == nil }
        compress(flush: Z_FINISH)
        finished = true
        return sink.flush()
    }

    private func compress(flush: Int32) {
        if finished { return }
        input.withUnsafeMutableBytes { raw in
            stream.next_in = raw.baseAddress?.assumingMemoryBound(to: UInt8.self)
            stream.avail_in = UInt32(raw.count)
            repeat {
                stream.next_out = output
                stream.avail_out = UInt32(outputSize)
                _ = deflate(&stream, flush)
                let produced = outputSize - Int(stream.avail_out)
                if produced > 0 { sink.write(bytes: UnsafeRawBufferPointer(start: output, count: produced)) }
            } while stream.avail_out == 0 || (flush == Z_FINISH && stream.avail_in > 0)
        }
        input.removeAll(keepingCapacity: true)
    }
}
