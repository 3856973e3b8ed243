#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A file an output is written to, whole or not at all: every file FetchCast writes for a user
/// goes through this.
///
/// The target is checked first: it may not be a directory, nor one of the command's
/// ``ProtectedFiles`` (its store, the store's `-wal`/`-shm`, an input). Bytes then go to a
/// temporary file beside the target (`.NAME.fetchcast-XXXXXXXX`), which ``commit()`` flushes,
/// syncs and renames over the target. An output that fails (a full disk, an error, a signal)
/// leaves the old file as it was, or no file: never a truncated one. SIGINT, SIGTERM or SIGHUP
/// remove the temporary file before the process ends (``PendingOutputs``); only SIGKILL or a
/// crash can leave one. An existing file is
/// replaced (keeping its owner and permissions; one this process may not write is refused); a
/// link is followed and the file it points to replaced.
/// `-` is standard output, and a device or a pipe (`/dev/null`, a FIFO) is written in place.
public final class OutputFile: TextOutputStream {
    /// The path as given (`-` for standard output).
    public let path: String
    /// Where the bytes go until ``commit()``.
    public let sink: FileSink
    /// The temporary file and the file it replaces; `nil` when written in place.
    private let replacing: (temporary: String, target: String)?
    private var finished = false

    /// Checks the target and opens the temporary file beside it.
    /// - Parameters:
    ///   - path: The output; `-` is standard output.
    ///   - protected: Files the output may not be (the store, the inputs).
    /// - Throws: ``OutputError`` when the target is refused or its folder cannot be written.
    public init(path: String, protecting protected: ProtectedFiles = ProtectedFiles()) throws(OutputError) {
        self.path = path
        if path == "-" {
            sink = .standardOutput()
            replacing = nil
            return
        }
        try protected.check(path)
        var st = stat()
        let exists = stat(path, &st) == 0
        if exists && (st.st_mode & S_IFMT) != S_IFREG {
            // A device or a pipe: nothing to replace, nothing a rename could keep whole.
            let fd = open(path, O_WRONLY | O_CLOEXEC)
            guard fd >= 0 else { throw .cannotWrite(path, code: errno) }
            sink = FileSink(owning: fd, path: path)
            replacing = nil
            return
        }
        // A file this process may not write stays as it is (as `>` would leave it), although
        // the folder would let a rename replace it.
        if exists && access(path, W_OK) != 0 { throw .cannotWrite(path, code: errno) }
        let target = exists ? (FileIdentity.resolvedPath(path) ?? path) : path
        let (folder, name) = FileIdentity.split(target)
        for _ in 0..<100 {
            let suffix = String(UInt32.random(in: 0...UInt32.max), radix: 16)
            let temporary = (folder == "/" ? "" : folder) + "/." + name + ".fetchcast-" + suffix
            let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, exists ? 0o600 : 0o666)
            if fd < 0 && errno == EEXIST { continue }
            guard fd >= 0 else {
                let code = errno
                let where_ = folder == "." ? "the current folder" : folder
                throw OutputError(path: path, reason: "cannot create a file in \(where_): \(String(cString: strerror(code)))", code: code)
            }
            // A replaced file keeps its owner (where this process may set it) and permissions,
            // set before any byte is written to it.
            if exists {
                _ = fchown(fd, st.st_uid, st.st_gid)
                fchmod(fd, st.st_mode & 0o7777)
            }
            PendingOutputs.add(temporary)
            sink = FileSink(owning: fd, path: path)
            replacing = (temporary, target)
            return
        }
        throw OutputError(path: path, reason: "cannot pick a temporary name beside it")
    }

    deinit {
        // Not committed (an error, or nothing to write): the target stays as it was.
        if !finished, let replacing {
            sink.closeFile(keep: false)
            unlink(replacing.temporary)
            PendingOutputs.remove(replacing.temporary)
        }
    }

    /// Writes text.
    public func write(_ string: String) { sink.write(string) }

    /// Flushes and syncs what was written, then renames it over the target (or, for standard
    /// output or a device, flushes it).
    /// - Throws: ``OutputError`` naming the output when a byte could not be written; the target
    ///   is then as it was before. ``OutputError/isClosedPipe`` when standard output's reader
    ///   went away.
    public func commit() throws(OutputError) {
        guard !finished else { return }
        finished = true
        guard let replacing else {
            if path == "-" {
                if !sink.flush() { throw .cannotWrite(path, code: sink.failure ?? EIO) }
            } else if let code = sink.closeFile() {
                throw .cannotWrite(path, code: code)
            }
            return
        }
        // Renamed or removed, the temporary file is no longer one a signal should remove.
        defer { PendingOutputs.remove(replacing.temporary) }
        if let code = sink.closeFile() {
            unlink(replacing.temporary)
            throw .cannotWrite(path, code: code)
        }
        guard rename(replacing.temporary, replacing.target) == 0 else {
            let code = errno
            unlink(replacing.temporary)
            throw .cannotWrite(path, code: code)
        }
    }

    /// Drops what was written: the target stays as it was. (Also what releasing an uncommitted
    /// output does.)
    public func discard() {
        guard !finished else { return }
        finished = true
        if let replacing {
            sink.closeFile(keep: false)
            unlink(replacing.temporary)
            PendingOutputs.remove(replacing.temporary)
        }
    }
}
