/// A tokens file that cannot be used.
public struct TokenFileError: Error, Sendable, CustomStringConvertible {
    /// The file.
    public var file: String
    /// The 1-based line, or 0 for the file as a whole.
    public var line: Int
    /// What is wrong.
    public var message: String

    /// `FILE:LINE: what is wrong`.
    public var description: String {
        "\(file)\(line > 0 ? ":\(line)" : ""): \(message)"
    }
}
