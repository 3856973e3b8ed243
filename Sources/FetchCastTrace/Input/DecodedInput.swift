import CZlib

/// The bytes of a trace after gzip decompression, when the input is gzip.
///
/// gzip is recognised by its magic bytes (`1f 8b`), not by the file name. Concatenated gzip
/// members are read one after another, as `zcat` does. The raw input hashes what it reads
/// (``RawInput/sha256``).
package final class DecodedInput {
    /// The raw input underneath.
    package let raw: RawInput
    /// Whether the input is gzip.
    package private(set) var isGzip = false

    private let rawChunk: UnsafeMutableRawBufferPointer
    private var rawStart = 0
    private var rawEnd = 0
    private var rawEOF = false
    private var stream = z_stream()
    private var streamOpen = false
    private var memberEnded = false
    private var started = false

    /// Wraps a raw input.
    package init(_ raw: RawInput) {
        self.raw = raw
        rawChunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 18, alignment: 16)
    }

    deinit {
        if streamOpen { inflateEnd(&stream) }
        rawChunk.deallocate()
    }

    private func fillRaw() throws(TraceError) {
        if rawStart < rawEnd || rawEOF { return }
        let n = try raw.read(into: rawChunk)
        rawStart = 0
        rawEnd = n
        if n == 0 { rawEOF = true }
    }

    private func fail(_ problem: TraceError.Problem) -> TraceError {
        TraceError(file: raw.path, line: 0, column: 0, problem: problem)
    }

    /// The stream ended early: every raw byte was read (the offset is the input's length).
    private func truncated() -> TraceError {
        fail(.truncatedGzip(compressedBytes: raw.bytesRead, completeLines: nil))
    }

    /// Reads decoded bytes; returns 0 only at the end of the input.
    /// - Throws: ``TraceError`` for a truncated or corrupt gzip stream.
    package func read(into out: UnsafeMutableRawBufferPointer) throws(TraceError) -> Int {
        if !started {
            started = true
            try fillRaw()
            // Need two bytes to recognise gzip.
            if rawEnd - rawStart == 1 && !rawEOF {
                let n = try raw.read(into: UnsafeMutableRawBufferPointer(rebasing: rawChunk[1...]))
                if n == 0 { rawEOF = true }
                rawEnd = 1 + n
            }
            if rawEnd - rawStart >= 2 && rawChunk[rawStart] == 0x1f && rawChunk[rawStart + 1] == 0x8b {
                isGzip = true
                try openMember()
            }
        }
        if !isGzip {
            try fillRaw()
            let n = min(out.count, rawEnd - rawStart)
            if n == 0 { return 0 }
            out.baseAddress!.copyMemory(from: rawChunk.baseAddress! + rawStart, byteCount: n)
            rawStart += n
            return n
        }
        return try inflateInto(out)
    }

    private func openMember() throws(TraceError) {
        if streamOpen {
            guard inflateReset(&stream) == Z_OK else { throw fail(.corruptGzip("cannot restart the decoder")) }
        } else {
            stream = z_stream()
            guard fetchcast_inflateInit2(&stream, 15 + 16) == Z_OK else { throw fail(.corruptGzip("cannot start the decoder")) }
            streamOpen = true
        }
        memberEnded = false
    }

    private func inflateInto(_ out: UnsafeMutableRawBufferPointer) throws(TraceError) -> Int {
        var produced = 0
        while produced == 0 {
            if memberEnded {
                // Another member, trailing zero padding, or the end.
                try fillRaw()
                while rawStart < rawEnd && rawChunk[rawStart] == 0 { rawStart += 1; if rawStart == rawEnd { try fillRaw() } }
                if rawStart == rawEnd && rawEOF { return 0 }
                guard rawChunk[rawStart] == 0x1f else {
                    throw fail(.corruptGzip("data after the end of the gzip stream is not another gzip member"))
                }
                try openMember()
            }
            try fillRaw()
            if rawStart == rawEnd && rawEOF {
                throw truncated()
            }
            stream.next_in = UnsafeMutablePointer(mutating: rawChunk.baseAddress!.assumingMemoryBound(to: UInt8.self)) + rawStart
            stream.avail_in = UInt32(rawEnd - rawStart)
            stream.next_out = out.baseAddress!.assumingMemoryBound(to: UInt8.self) + produced
            stream.avail_out = UInt32(out.count - produced)
            let status = inflate(&stream, Z_NO_FLUSH)
            let consumed = (rawEnd - rawStart) - Int(stream.avail_in)
            rawStart += consumed
            produced = out.count - Int(stream.avail_out)
            switch status {
            case Z_OK, Z_BUF_ERROR:
                if status == Z_BUF_ERROR && consumed == 0 && produced == 0 && rawEOF { throw truncated() }
            case Z_STREAM_END:
                memberEnded = true
            default:
                let message = stream.msg.map { String(cString: $0) } ?? "zlib error \(status)"
                throw fail(.corruptGzip(message))
            }
        }
        return produced
    }
}
