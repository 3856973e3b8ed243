import FetchCastModel

/// The baselines' reasons for a fetch (``FetchReason/policy(_:)``): the replay's vocabulary,
/// not the model's. Every text is a literal (a fetch's record copies no storage), and each is
/// what `evaluate --detail` writes in `fetches.csv.gz`'s `reason` column.
extension FetchReason {
    /// A fixed-interval poll (`interval`).
    static let interval = FetchReason.policy("fixed interval")
    /// The oracle's fetch one second before a needy launch it knows of (`oracle`).
    static let oracle = FetchReason.policy("oracle: 1 s before a needy launch")
    /// τ/2 before a launch estimated from the app's launches a week earlier (`weekly`).
    static let weekly = FetchReason.policy("weekly: half a window before a launch estimated from last week")

    /// The start of local hour `hour`, which ranks among the most-used (`hourly`).
    static func hourly(hour: Int) -> FetchReason {
        .policy(hourlyTexts.indices.contains(hour) ? hourlyTexts[hour] : "hourly: top hour \(hour < 10 ? "0" : "")\(hour):00")
    }

    private static let hourlyTexts = [
        "hourly: top hour 00:00", "hourly: top hour 01:00", "hourly: top hour 02:00", "hourly: top hour 03:00",
        "hourly: top hour 04:00", "hourly: top hour 05:00", "hourly: top hour 06:00", "hourly: top hour 07:00",
        "hourly: top hour 08:00", "hourly: top hour 09:00", "hourly: top hour 10:00", "hourly: top hour 11:00",
        "hourly: top hour 12:00", "hourly: top hour 13:00", "hourly: top hour 14:00", "hourly: top hour 15:00",
        "hourly: top hour 16:00", "hourly: top hour 17:00", "hourly: top hour 18:00", "hourly: top hour 19:00",
        "hourly: top hour 20:00", "hourly: top hour 21:00", "hourly: top hour 22:00", "hourly: top hour 23:00",
    ]
}
