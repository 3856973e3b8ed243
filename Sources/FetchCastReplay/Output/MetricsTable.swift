import FetchCastModel
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

    /// Appended after ``columns`` when an evaluation involves device conditions (the input has
    /// `state` rows, or constraints or system rules are set): semantics v2, rule 7.
    static let conditionColumns = [
        "battery_joules_per_device_day", "cellular_fetches_per_device_day", "cellular_bytes_per_device_day",
        "offline_fetches", "blocked_fetches", "deferred_fetches",
    ]

    /// The condition columns' values; `cellular_bytes_per_device_day` is empty when the input
    /// gives no `bytes` on any fetch row.
    static func conditionValues(_ m: DeviceMetrics, bytesKnown: Bool) -> [String] {
        func real(_ x: Double) -> String { CSVField.fixed(x, decimals: 3) }
        return [
            real(m.perDeviceDay(m.batteryJoules)), real(m.perDeviceDay(Double(m.cellularFetches))),
            bytesKnown ? real(m.perDeviceDay(m.cellularBytes)) : "", String(m.offlineFetches), String(m.blockedFetches),
            String(m.deferredFetches),
        ]
    }

    /// The columns of `delivery.csv` after `policy,budget` (semantics d1).
    static let deliveryColumns = [
        "delivery", "device_days", "pushes_sent", "pushes_delivered", "pushes_delayed", "pushes_delivered_at_open",
        "pushes_collapsed", "pushes_dropped", "sent_per_device_day", "delivered_per_device_day", "delayed_per_device_day",
        "collapsed_per_device_day", "dropped_per_device_day", "delay_p50_s", "delay_p90_s", "delay_max_s",
    ]

    /// The values of a `delivery.csv` row: counts as integers, other reals with 3 decimals; the
    /// delay quantiles (nearest rank) are empty without deliveries.
    static func deliveryValues(_ m: DeviceMetrics, delivery: DeliveryOptions.Kind) -> [String] {
        func real(_ x: Double) -> String { CSVField.fixed(x, decimals: 3) }
        let p = m.push
        return [
            delivery.rawValue, real(m.deviceDays), String(p.sent), String(p.delivered), String(p.delayed),
            String(p.deliveredAtOpen), String(p.collapsed), String(p.dropped), real(m.perDeviceDay(Double(p.sent))),
            real(m.perDeviceDay(Double(p.delivered))), real(m.perDeviceDay(Double(p.delayed))),
            real(m.perDeviceDay(Double(p.collapsed))), real(m.perDeviceDay(Double(p.dropped))),
            p.delayQuantile(0.5).map(real) ?? "", p.delayQuantile(0.9).map(real) ?? "", p.delayQuantile(1).map(real) ?? "",
        ]
    }

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

    /// The columns of `slices.csv` after `policy,budget`.
    static let sliceColumns = ["slice", "silence_from_s", "silence_to_s", "needy_launches", "fresh_needy_launches", "hit_rate"]

    /// The rows of `slices.csv` for one (policy, budget), in slice order: the silence bounds in
    /// whole seconds (`silence_to_s` empty for the open last slice), the counts, and the hit
    /// rate with 6 decimals (empty without needy launches).
    static func sliceValues(_ s: SilenceSlices) -> [[String]] {
        SilenceSlices.Slice.allCases.map { slice in
            let (from, to) = slice.silence
            return [
                slice.name, String(Int(from)), to.map { String(Int($0)) } ?? "", String(s.needy[slice.rawValue]),
                String(s.freshNeedy[slice.rawValue]), CSVField.fixed(s.hitRate(slice), decimals: 6),
            ]
        }
    }
}
