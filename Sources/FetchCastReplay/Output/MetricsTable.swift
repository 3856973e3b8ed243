import FetchCastTrace

/// The columns of `summary.csv` and `devices.csv`, in the order the v1 semantics fix, then the
/// extras (new columns are only ever appended).
enum MetricsTable {
    /// The v1 columns after `policy,budget` (and `device` in devices.csv).
    static let columns = [
        "devices", "device_days", "launches", "scored_launches", "needy_launches", "fresh_launches",
        "fresh_ratio", "hit_rate", "fetches", "fetches_per_device_day", "wakeups_per_device_day",
        "joules_per_device_day", "mean_staleness_min",
        // Extras.
        "new_data_fetches", "no_data_fetches", "content_fresh_ratio", "fresh_needy_launches", "wakeups",
        "joules", "refused_fetches",
    ]

    /// A budget as written: an integer when whole, else 3 decimals.
    static func budget(_ b: Double) -> String {
        b == b.rounded() && abs(b) < 1e15 ? String(Int(b)) : CSVField.fixed(b, decimals: 3)
    }

    /// The values of a row, in ``columns`` order: counts as integers, ratios with 6 decimals,
    /// other reals with 3; an undefined ratio (0/0) is empty.
    static func values(_ m: DeviceMetrics) -> [String] {
        func ratio(_ x: Double) -> String { CSVField.fixed(x, decimals: 6) }
        func real(_ x: Double) -> String { CSVField.fixed(x, decimals: 3) }
        return [
            String(m.devices), real(m.deviceDays), String(m.launches), String(m.scoredLaunches),
            String(m.needyLaunches), String(m.freshLaunches), ratio(m.freshRatio), ratio(m.hitRate),
            String(m.fetches), real(m.perDeviceDay(Double(m.fetches))), real(m.perDeviceDay(Double(m.wakeups))),
            real(m.perDeviceDay(m.joules)), real(m.meanStalenessMinutes),
            String(m.newDataFetches), String(m.noDataFetches), ratio(m.contentFreshRatio),
            String(m.freshNeedyLaunches), String(m.wakeups), real(m.joules), String(m.refusedFetches),
        ]
    }
}
