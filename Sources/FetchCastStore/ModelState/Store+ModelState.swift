extension Store: ModelStore {
    /// A persisted blob of learned state (``ModelStateRecord``).
    package typealias ModelStateRecord = FetchCastStore.ModelStateRecord

    /// Reads the stored state for a key in place, without copying it out of SQLite: `body`
    /// gets the watermark and the bytes (valid only inside it); `nil` when there is no state.
    /// - Complexity: one indexed lookup with a statement kept prepared; O(size of the state).
    package func withModelState<T>(key: String, _ body: (_ watermark: Int64, _ state: UnsafeRawBufferPointer) -> T) throws(StoreError) -> T? {
        let s = try connection.cached("SELECT watermark, state FROM model_state WHERE key = ?")
        defer { s.reset() }
        s.bindText(1, key)
        guard try s.step() else { return nil }
        return s.withBlob(1) { body(s.int(0), $0) }
    }

    /// The watermark of the stored state for a key, without reading the state; `nil` when
    /// there is none.
    package func modelStateWatermark(key: String) throws(StoreError) -> Int64? {
        let s = try connection.cached("SELECT watermark FROM model_state WHERE key = ?")
        defer { s.reset() }
        s.bindText(1, key)
        return try s.step() ? s.int(0) : nil
    }

    /// Every stored state whose key starts with `prefix`.
    package func modelStates(prefix: String) throws(StoreError) -> [ModelStateRecord] {
        let s = try connection.prepare("SELECT key, watermark, state FROM model_state WHERE substr(key, 1, ?) = ? ORDER BY key")
        try s.bind([.integer(Int64(prefix.utf8.count)), .text(prefix)])
        var out: [ModelStateRecord] = []
        while try s.step() { out.append(ModelStateRecord(key: s.text(0), watermark: s.int(1), state: s.blob(2))) }
        return out
    }

    /// A page of the states whose keys start with `prefix` (ending in ASCII), in key order,
    /// after `after` when given: at most `limit`.
    /// - Complexity: O(log states + limit), a range of the key index.
    package func modelStates(prefix: String, after: String?, limit: Int) throws(StoreError) -> [ModelStateRecord] {
        let s = try connection.prepare("SELECT key, watermark, state FROM model_state WHERE key >= ? AND key < ? AND key > ? ORDER BY key LIMIT ?")
        try s.bind([.text(prefix), .text(Self.keyAbove(prefix: prefix)), .text(after ?? ""), .integer(Int64(max(0, limit)))])
        var out: [ModelStateRecord] = []
        while try s.step() { out.append(ModelStateRecord(key: s.text(0), watermark: s.int(1), state: s.blob(2))) }
        return out
    }

    /// The least key above every key starting with `prefix`, which must end in a character below
    /// U+007F (its last byte plus one).
    package static func keyAbove(prefix: String) -> String {
        var upper = Array(prefix.utf8)
        precondition(upper.last.map { $0 < 0x7f } == true, "a prefix ending in ASCII")
        upper[upper.count - 1] += 1
        return String(decoding: upper, as: UTF8.self)
    }

    /// Writes states (inside the caller's transaction, or on their own).
    package func saveModelStates(_ records: [ModelStateRecord]) throws(StoreError) {
        let s = try connection.prepare("INSERT INTO model_state(key, watermark, state) VALUES (?, ?, ?) ON CONFLICT(key) DO UPDATE SET watermark = excluded.watermark, state = excluded.state")
        for r in records {
            try s.bind([.text(r.key), .integer(r.watermark), .blob(r.state)])
            try s.run()
        }
    }

    /// Deletes the stored state of `key`, if any (inside the caller's transaction, or on its own).
    package func deleteModelState(key: String) throws(StoreError) {
        let s = try connection.prepare("DELETE FROM model_state WHERE key = ?")
        try s.bind([.text(key)])
        try s.run()
    }

    /// Deletes every stored state whose key starts with `prefix`, which must end in a character
    /// below U+007F (inside the caller's transaction, or on its own).
    /// - Complexity: O(log states + states deleted), a range of the key index.
    package func deleteModelStates(prefix: String) throws(StoreError) {
        let s = try connection.prepare("DELETE FROM model_state WHERE key >= ? AND key < ?")
        try s.bind([.text(prefix), .text(Self.keyAbove(prefix: prefix))])
        try s.run()
    }
}
