extension Store {
    /// How far a committed transaction survives.
    package enum Durability: Sendable {
        /// A crash of the process (`PRAGMA synchronous=NORMAL`, the level every store opens with).
        case normal
        /// Also power loss: the WAL is synced at each commit (`PRAGMA synchronous=FULL`).
        case full
    }

    /// Sets how far this connection's commits survive.
    /// - Throws: ``StoreError`` when SQLite refuses the setting.
    package func setDurability(_ durability: Durability) throws(StoreError) {
        switch durability {
        case .normal: try connection.execute("PRAGMA synchronous=NORMAL")
        case .full: try connection.execute("PRAGMA synchronous=FULL")
        }
    }
}
