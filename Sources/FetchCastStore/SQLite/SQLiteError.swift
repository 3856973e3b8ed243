/// A failure reported by SQLite, or a store that cannot be used.
public struct StoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The store's path.
    public var path: String
    /// What went wrong, as a sentence naming what to do.
    public var message: String
    /// SQLite's result code, when SQLite reported it.
    public var code: Int32?

    /// Creates an error.
    public init(path: String, message: String, code: Int32? = nil) {
        self.path = path
        self.message = message
        self.code = code
    }

    public var description: String { "\(path): \(message)" }
}
