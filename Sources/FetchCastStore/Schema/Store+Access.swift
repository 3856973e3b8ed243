#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension Store {
    /// What a command does with an existing store; decides how it is opened.
    public enum Access: Sendable {
        /// Only reads (`stats`, `devices`, `evaluate --db`): opened read-only, so that a store
        /// on a read-only mount or handed out without write permission can be read.
        case read
        /// Reads, and saves what it derives (the learned model: `predict`, `model`, `export`)
        /// when the store can be written; when it cannot, opened read-only: saving then fails
        /// with `SQLITE_READONLY`, and the caller answers from memory (see `isWriteFailure`).
        case readSavingWhenWritable
    }

    /// How SQLite is asked to open a store: the decision ``Store/init(path:access:)`` makes
    /// from what the file system allows.
    package struct OpenMode: Sendable, Hashable {
        /// Opened read-only (`SQLITE_OPEN_READONLY`).
        package var readOnly: Bool
        /// Opened with `immutable=1`: SQLite takes no lock and needs no `-shm` file (a
        /// read-only folder, with no `-wal` file whose changes it would miss).
        package var immutable: Bool

        /// Decides how to open a store.
        /// - Parameters:
        ///   - access: What the command does with it.
        ///   - fileWritable: Whether the database file can be written.
        ///   - folderWritable: Whether its folder can be written (SQLite creates `-wal` and
        ///     `-shm` files there).
        ///   - walInUse: Whether a non-empty `-wal` file holds changes not yet in the file.
        package static func decide(access: Access, fileWritable: Bool, folderWritable: Bool, walInUse: Bool) -> OpenMode {
            let readOnly = access == .read || !fileWritable || !folderWritable
            return OpenMode(readOnly: readOnly, immutable: readOnly && !folderWritable && !walInUse)
        }

        /// The mode for the store at `path`, from what the file system allows this process.
        static func decide(access: Access, path: String) -> OpenMode {
            var st = stat()
            let walInUse = stat(path + "-wal", &st) == 0 && st.st_size > 0
            return decide(
                access: access, fileWritable: canWrite(path), folderWritable: canWrite(folder(of: path)), walInUse: walInUse)
        }

        /// The folder a path is in.
        private static func folder(of path: String) -> String {
            guard let slash = path.lastIndex(of: "/") else { return "." }
            return slash == path.startIndex ? "/" : String(path[..<slash])
        }
    }

    /// Whether this process can write the existing store at `path`: the file and its folder
    /// (where SQLite keeps the `-wal` and `-shm` files) are writable.
    public static func isWritable(path: String) -> Bool {
        !OpenMode.decide(access: .readSavingWhenWritable, path: path).readOnly
    }

    /// Opens an existing store for a command that reads it (see ``Access``).
    ///
    /// Read-only when the command only reads, or when the file or its folder cannot be written,
    /// with `immutable=1` when the folder is read-only (no lock, no `-shm` file). A store whose
    /// schema is older than this build is upgraded when it can be written.
    /// - Throws: ``StoreError`` when the file does not exist, is not a FetchCast store, or is
    ///   read-only with an older schema.
    public convenience init(path: String, access: Access) throws(StoreError) {
        guard exists(path) else {
            throw StoreError(path: path, message: "no such store (the file does not exist)")
        }
        let mode = OpenMode.decide(access: access, path: path)
        if !mode.readOnly {
            try self.init(path: path, create: false)
            return
        }
        let connection = try Connection(path: path, create: false, readOnly: true, immutable: mode.immutable)
        connection.setBusyTimeout(milliseconds: 600_000)
        try Store.refuseForeignDatabase(connection, path: path)
        let version = try connection.scalarInt("PRAGMA user_version")
        if version > Schema.currentVersion {
            throw StoreError(path: path, message: "the store has schema version \(version), newer than this fetchcast (\(Schema.currentVersion)); upgrade fetchcast")
        }
        if version < Schema.currentVersion {
            let writable = !OpenMode.decide(access: .readSavingWhenWritable, path: path).readOnly
            guard writable else {
                throw StoreError(path: path, message: "the store has schema version \(version), older than this fetchcast (\(Schema.currentVersion)), and cannot be upgraded because it is read-only; run any fetchcast command once on a writable copy")
            }
            try self.init(path: path, create: false)  // upgrades it, as a writer
            return
        }
        try connection.execute("PRAGMA temp_store=MEMORY;")
        self.init(path: path, readOnlyConnection: connection)
    }
}

// File scope: inside `Store`, the name `access` is a parameter's.
private func canWrite(_ path: String) -> Bool { access(path, W_OK) == 0 }
private func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }
