import FetchCastTrace

/// The SHA-256 of a regular file, computed in steps that follow another reader's progress.
final class FileHasher {
    private let input: RawInput
    private var hasher = SHA256()
    private var hashed: Int64 = 0
    private let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 18, alignment: 16)

    init(path: String) throws(TraceError) {
        input = try RawInput(path: path)
    }

    deinit { chunk.deallocate() }

    /// Hashes the file's bytes up to at least `offset` (or its end).
    func hash(upTo offset: Int64) throws(TraceError) {
        while hashed < offset {
            let n = try input.read(into: chunk)
            if n == 0 { return }
            hasher.update(UnsafeRawBufferPointer(rebasing: chunk[0..<n]))
            hashed += Int64(n)
        }
    }

    /// Hashes the rest and returns the hex digest.
    func finish() throws(TraceError) -> String {
        try hash(upTo: Int64.max)
        return hasher.hexDigest()
    }
}
