/// One generated launch: a local day and second of day, the app and how long it stayed open.
struct HabitLaunch: Sendable, Hashable {
    /// The local day (days since 1970-01-01).
    var day: Int
    /// Seconds after local midnight, 0 ..< 86 400.
    var second: Int
    /// The app opened.
    var app: String
    /// How long the app stayed in the foreground, milliseconds.
    var durationMs: Int
}
