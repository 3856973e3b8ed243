#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The files a command reads (its store and inputs), which none of its outputs may replace.
///
/// Files are compared by device and inode after following links, so `./s.sqlite`,
/// `../here/s.sqlite` and a symbolic link to it are one file; paths that do not exist yet are
/// compared by their resolved folder and name.
public struct ProtectedFiles: Sendable {
    private struct Entry: Sendable {
        var path: String
        var role: String
    }

    private var entries: [Entry] = []

    /// Creates the set: `store` (with its `-wal`, `-shm` and `-journal` files) and `inputs`
    /// (`-`, standard input, is skipped).
    public init(store: String? = nil, inputs: [String] = []) {
        if let store { add(store: store) }
        add(inputs: inputs)
    }

    /// Adds a store: the database file and its `-wal`, `-shm` and `-journal` files (also those
    /// beside the file a link points to, where SQLite puts them).
    public mutating func add(store: String) {
        var bases = [store]
        if let real = FileIdentity.resolvedPath(store), real != store { bases.append(real) }
        for base in bases {
            entries.append(Entry(path: base, role: "the store"))
            for suffix in ["-wal", "-shm", "-journal"] {
                entries.append(Entry(path: base + suffix, role: "the store's \(suffix.dropFirst()) file"))
            }
        }
    }

    /// Adds files the command reads (`-` is skipped).
    public mutating func add(inputs: [String]) {
        for input in inputs where input != "-" { entries.append(Entry(path: input, role: "an input")) }
    }

    /// Throws when `path` is a directory, or names one of the protected files.
    /// - Throws: ``OutputError`` naming the file it would have replaced.
    public func check(_ path: String) throws(OutputError) {
        let target = FileIdentity(path)
        if target.isDirectory {
            throw OutputError(path: path, reason: "is a directory; name a file to write")
        }
        for entry in entries where target.isSame(as: FileIdentity(entry.path)) {
            let same = entry.path == path ? "" : " (\(entry.path))"
            throw OutputError(
                path: path,
                reason: "is \(entry.role)\(same); writing there would destroy it, so name another output file")
        }
        if let role = Self.databaseRole(path) {
            throw OutputError(path: path, reason: "is \(role); writing there would destroy it, so name another output file")
        }
    }

    /// What an existing file is when it belongs to an SQLite database, whatever its name: a
    /// database (a FetchCast store or any other), a write-ahead log, or the `-wal`, `-shm` or
    /// `-journal` file beside one; `nil` for anything else. A command may be handed any store
    /// (`--db`, `$FETCHCAST_DB`, one a link names), so outputs recognise stores by content, not
    /// only by the paths the command knows.
    static func databaseRole(_ path: String) -> String? {
        if let kind = SQLiteFileKind(path) {
            return kind == .database ? "an SQLite database (a store)" : "an SQLite write-ahead log (a store's -wal file)"
        }
        for suffix in ["-wal", "-shm", "-journal"] where path.hasSuffix(suffix) && path.count > suffix.count {
            let base = String(path.dropLast(suffix.count))
            if SQLiteFileKind(base) == .database { return "the \(suffix.dropFirst()) file of the SQLite database \(base)" }
        }
        return nil
    }
}

/// What the first bytes of a regular file say it is, when it is SQLite's.
enum SQLiteFileKind {
    case database, writeAheadLog

    /// Reads the file's header: `SQLite format 3\0`, or a WAL header's magic (0x377f0682 or
    /// 0x377f0683, big-endian); `nil` for anything else, a missing file, or one that cannot be read.
    init?(_ path: String) {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
        var header = [UInt8](repeating: 0, count: 16)
        let count = header.withUnsafeMutableBytes { read(fd, $0.baseAddress, 16) }
        if count == 16 && header == Array("SQLite format 3\0".utf8) {
            self = .database
        } else if count >= 4 && header[0] == 0x37 && header[1] == 0x7f && header[2] == 0x06 && (header[3] == 0x82 || header[3] == 0x83) {
            self = .writeAheadLog
        } else {
            return nil
        }
    }
}

/// What a path names: its device and inode when it exists (links followed), else its resolved
/// folder and name.
struct FileIdentity {
    var device: UInt64?
    var inode: UInt64?
    var isDirectory = false
    /// The resolved path (`realpath` of the folder, then the name).
    var resolved: String

    init(_ path: String) {
        var st = stat()
        if stat(path, &st) == 0 {
            device = UInt64(st.st_dev)
            inode = UInt64(st.st_ino)
            isDirectory = (st.st_mode & S_IFMT) == S_IFDIR
        }
        resolved = Self.resolvedPath(path) ?? path
    }

    /// Whether both name one file: the same device and inode when both exist, else the same
    /// resolved path.
    func isSame(as other: FileIdentity) -> Bool {
        if let device, let inode, let d = other.device, let i = other.inode { return device == d && inode == i }
        return resolved == other.resolved
    }

    /// `realpath` of the path when it exists, else `realpath` of its folder followed by its name
    /// (`nil` when the folder does not exist either).
    static func resolvedPath(_ path: String) -> String? {
        if let whole = realpath(path, nil) {
            defer { free(whole) }
            return String(cString: whole)
        }
        let (folder, name) = split(path)
        guard let resolved = realpath(folder, nil) else { return nil }
        defer { free(resolved) }
        let base = String(cString: resolved)
        return (base == "/" ? "" : base) + "/" + name
    }

    /// The folder and the last component of a path (`.` for a bare name).
    static func split(_ path: String) -> (folder: String, name: String) {
        var trimmed = Substring(path)
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return (".", String(trimmed)) }
        let folder = trimmed[..<slash]
        return (folder.isEmpty ? "/" : String(folder), String(trimmed[trimmed.index(after: slash)...]))
    }
}
