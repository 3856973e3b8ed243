/// Counts with their noun in the right number, for messages: "1 event", "2 events".
public enum Plural {
    /// `n` followed by `singular` when `n` is 1, else by `plural` (default: `singular` + "s").
    ///
    /// ```swift
    /// Plural.count(1, "rejected row")   // "1 rejected row"
    /// Plural.count(3, "device")         // "3 devices"
    /// Plural.count(2, "entry", plural: "entries")
    /// ```
    public static func count<N: BinaryInteger>(_ n: N, _ singular: String, plural: String? = nil) -> String {
        "\(n) " + noun(n, singular, plural: plural)
    }

    /// `singular` when `n` is 1, else `plural` (default: `singular` + "s"), without the number.
    public static func noun<N: BinaryInteger>(_ n: N, _ singular: String, plural: String? = nil) -> String {
        n == 1 ? singular : (plural ?? singular + "s")
    }
}
