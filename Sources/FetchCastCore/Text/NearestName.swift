/// The known name a mistyped one most likely meant, for "did you mean …?" in error messages.
///
/// A candidate is suggested when it ends with the typed name as a dotted or dashed component
/// (`news` → `com.acme.news`), or when at most a third of the typed name's characters (at least
/// one, at most 3) must be inserted, removed, replaced or swapped to reach it (Damerau–Levenshtein,
/// optimal string alignment), case ignored. Ties go to the earlier candidate in name order.
public enum NearestName {
    /// The best suggestion for `name` among `candidates`, or `nil` when none is close.
    /// - Complexity: O(n × m × k) for k candidates of length m and a name of length n.
    public static func suggestion(for name: String, among candidates: some Sequence<String>) -> String? {
        let typed = Array(name.lowercased())
        guard !typed.isEmpty else { return nil }
        let limit = min(3, max(1, typed.count / 3))
        var best: (distance: Int, name: String)?
        for candidate in candidates where candidate != name {
            let other = Array(candidate.lowercased())
            let distance: Int
            if other.count > typed.count, other.suffix(typed.count) == typed[...],
                [".", "-", "_", "/"].contains(other[other.count - typed.count - 1])
            {
                distance = 0
            } else {
                guard abs(other.count - typed.count) <= limit else { continue }
                distance = editDistance(typed, other)
                guard distance <= limit else { continue }
            }
            if best == nil || distance < best!.distance || (distance == best!.distance && candidate < best!.name) {
                best = (distance, candidate)
            }
        }
        return best?.name
    }

    /// `" (did you mean 'X'?)"`, or `""` when nothing is close.
    public static func didYouMean(_ name: String, among candidates: some Sequence<String>) -> String {
        suggestion(for: name, among: candidates).map { " (did you mean '\($0)'?)" } ?? ""
    }

    /// Optimal string alignment distance: insertions, deletions, substitutions and adjacent swaps.
    static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous2 = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    current[j] = min(current[j], previous2[j - 2] + 1)
                }
            }
            (previous2, previous, current) = (previous, current, previous2)
        }
        return previous[b.count]
    }
}
