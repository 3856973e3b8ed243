/// The parameters of ``ConditionOverlay``: every one is a flag of `fetchcast conditions
/// generate`, and the defaults are what `Data/ubiqlog-sample-conditions.csv.gz` was made with.
///
/// Times are in the device's local time (the offset of its latest event); rates are per hour
/// unless named otherwise; percentages are battery percent.
public struct OverlayOptions: Sendable, Hashable, Codable {
    /// The generator's seed: the same seed and trace give byte-identical output.
    public var seed: UInt64 = 1
    /// The simulation step in minutes: conditions change only at step boundaries.
    public var stepMinutes: Int = 5
    /// Length of the overnight window (charging, on home Wi-Fi), placed at each device's
    /// quietest run of hours of the day (fewest launches).
    public var nightHours: Int = 7
    /// Hours before the night window spent at home.
    public var eveningHours: Int = 4
    /// The chance that the device is on home Wi-Fi on a given evening.
    public var eveningWifiProbability: Double = 0.85
    /// The chance, each daytime hour, that a Wi-Fi spell (office, café) begins.
    public var daytimeWifiProbability: Double = 0.2
    /// Mean length of a daytime Wi-Fi spell in minutes (drawn uniformly from half to 1.5×).
    public var daytimeWifiMinutes: Double = 60
    /// The chance, each daytime hour, that an offline spell (no coverage) begins.
    public var offlineProbability: Double = 0.02
    /// Mean length of an offline spell in minutes (uniform, half to 1.5×).
    public var offlineMinutes: Double = 20
    /// Latest plug-in after the night window starts, and earliest unplug before it ends, in
    /// minutes (each drawn uniformly from zero to this, per night).
    public var plugJitterMinutes: Double = 60
    /// The battery level at the device's first event.
    public var startBattery: Double = 80
    /// Battery drained per hour on battery with the screen off.
    public var drainPerHour: Double = 1.5
    /// Extra battery drained per launch.
    public var drainPerLaunch: Double = 0.4
    /// Battery gained per hour while charging.
    public var chargePerHour: Double = 40
    /// Below this level, on battery, outside the night window, the user plugs in for a
    /// daytime top-up.
    public var topUpBelow: Double = 12
    /// Length of a daytime top-up in minutes.
    public var topUpMinutes: Double = 60
    /// Below this level on battery, the user may turn Low Power Mode on (iOS offers it at 20%).
    public var lowPowerBelow: Double = 20
    /// The chance that the user turns Low Power Mode on when offered; it goes off on charging.
    public var lowPowerProbability: Double = 0.6
    /// A `state` row reports the battery whenever the level moved this many points since the
    /// last report (and with every other change).
    public var batteryStep: Int = 5

    /// The defaults.
    public init() {}

    /// The problem with the options, as a sentence naming the flag to fix, or `nil`.
    public var problem: String? {
        func probability(_ v: Double, _ flag: String) -> String? {
            v >= 0 && v <= 1 ? nil : "--\(flag) is \(v) (expected a probability from 0 to 1)"
        }
        func nonNegative(_ v: Double, _ flag: String) -> String? {
            v.isFinite && v >= 0 ? nil : "--\(flag) is \(v) (expected a finite number ≥ 0)"
        }
        if stepMinutes < 1 || stepMinutes > 60 { return "--step-minutes is \(stepMinutes) (expected 1 to 60)" }
        if nightHours < 0 || eveningHours < 0 || nightHours + eveningHours > 24 {
            return "--night-hours \(nightHours) and --evening-hours \(eveningHours) (expected each ≥ 0, together at most 24)"
        }
        if batteryStep < 1 || batteryStep > 100 { return "--battery-step is \(batteryStep) (expected 1 to 100)" }
        if !(startBattery >= 0 && startBattery <= 100) { return "--start-battery is \(startBattery) (expected 0 to 100)" }
        let probabilities: [(Double, String)] = [
            (eveningWifiProbability, "evening-wifi-probability"), (daytimeWifiProbability, "daytime-wifi-probability"),
            (offlineProbability, "offline-probability"), (lowPowerProbability, "low-power-probability"),
        ]
        for (v, flag) in probabilities { if let p = probability(v, flag) { return p } }
        let amounts: [(Double, String)] = [
            (daytimeWifiMinutes, "daytime-wifi-minutes"), (offlineMinutes, "offline-minutes"),
            (plugJitterMinutes, "plug-jitter-minutes"), (drainPerHour, "drain-per-hour"),
            (drainPerLaunch, "drain-per-launch"), (chargePerHour, "charge-per-hour"), (topUpBelow, "top-up-below"),
            (topUpMinutes, "top-up-minutes"), (lowPowerBelow, "low-power-below"),
        ]
        for (v, flag) in amounts { if let p = nonNegative(v, flag) { return p } }
        // Spells are timed in whole microseconds (Int64): a week is plenty and cannot overflow.
        for (v, flag) in [(daytimeWifiMinutes, "daytime-wifi-minutes"), (offlineMinutes, "offline-minutes"),
                          (plugJitterMinutes, "plug-jitter-minutes"), (topUpMinutes, "top-up-minutes")] where v > 10_080 {
            return "--\(flag) is \(v) (expected at most 10080, a week)"
        }
        return nil
    }
}
