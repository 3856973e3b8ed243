extension StoredFile {
    /// The one file of `files` that `fileOrHash` names: by path as ingested, by full SHA-256
    /// (any case), or else by a unique hash prefix of at least 8 digits; how `forget` finds its
    /// file on either engine.
    /// - Parameters:
    ///   - fileOrHash: What the user gave.
    ///   - files: The store's files, oldest first.
    ///   - location: The store, for the error.
    /// - Returns: The file.
    /// - Throws: ``StoreError`` when nothing or more than one file matches.
    package static func matching(_ fileOrHash: String, in files: [StoredFile], location: String) throws(StoreError) -> StoredFile {
        let hash = fileOrHash.lowercased()
        var matches = files.filter { $0.name == fileOrHash || $0.sha256 == hash }
        if matches.isEmpty && fileOrHash.count >= 8 {
            matches = files.filter { $0.sha256.hasPrefix(hash) }
        }
        guard let file = matches.first else {
            throw StoreError(path: location, message: "no ingested file is named or hashed '\(fileOrHash)' (see `fetchcast files`)")
        }
        guard matches.count == 1 else {
            throw StoreError(path: location, message: "'\(fileOrHash)' matches \(matches.count) files; give the full SHA-256 (see `fetchcast files`)")
        }
        return file
    }
}
