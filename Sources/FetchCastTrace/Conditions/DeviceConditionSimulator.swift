import FetchCastCore
/// Simulates one device's conditions over its trace span (``ConditionOverlay``'s model).
///
/// The day has three parts in local time: the *night* (the device's quietest `nightHours`
/// consecutive hours by launches: plugged in a little after it starts, unplugged a little before
/// it ends, on home Wi-Fi), the *evening* (the `eveningHours` before it: home Wi-Fi with
/// probability `eveningWifiProbability`, drawn per day), and the *day* (cellular, with Wi-Fi and
/// offline spells beginning at random hours). The battery drains per hour and per launch on
/// battery, charges while plugged in, triggers a daytime top-up below `topUpBelow`, and Low
/// Power Mode may come on below `lowPowerBelow` (off again when plugged in).
struct DeviceConditionSimulator {
    /// One `state` row to write.
    struct Row {
        var timeMicros: Int64
        var utcOffsetSeconds: Int32
        var change: ConditionChange
    }

    let options: OverlayOptions
    /// First hour (local) of the night window.
    let nightStart: Int

    /// Chooses the night window from the device's launches: the start hour of the
    /// `nightHours`-long run of hours (wrapping midnight) with the fewest launches, ties to the
    /// earliest start after 22:00 (so a device with no launches sleeps 22:00–05:00).
    init(options: OverlayOptions, launchesByLocalHour: [Int]) {
        self.options = options
        var best = 22, bestCount = Int.max
        for k in 0..<24 {
            let h = (22 + k) % 24
            let count = (0..<options.nightHours).reduce(0) { $0 + launchesByLocalHour[(h + $1) % 24] }
            if count < bestCount { (best, bestCount) = (h, count) }
        }
        nightStart = best
    }

    /// The part of the day a local hour falls in: 0 night, 1 evening, 2 day.
    func part(ofHour h: Int) -> Int {
        let sinceNight = (h - nightStart + 24) % 24
        if sinceNight < options.nightHours { return 0 }
        let untilNight = (nightStart - h + 24) % 24
        return untilNight <= options.eveningHours && untilNight > 0 ? 1 : 2
    }

    /// The `state` rows for a device whose events (time order) are `events`: one with all four
    /// fields at the first step, then one at each step where something changed.
    /// - Complexity: O(span / step + events).
    func rows(events: [(timeMicros: Int64, offset: Int32, isLaunch: Bool)], rng: inout SplitMix64) -> [Row] {
        guard let first = events.first, let last = events.last else { return [] }
        let o = options
        let step = Int64(o.stepMinutes) * 60_000_000
        let stepHours = Double(o.stepMinutes) / 60
        var rows: [Row] = []
        var index = 0
        var offset = first.offset
        var battery = o.startBattery
        var reported: (network: NetworkCondition, power: PowerCondition, battery: Int, low: Bool)?
        var day = Int.min
        var eveningWifi = false, plugAt = 0.0, unplugAt = 0.0
        var spellEnd: Int64 = .min, spellNetwork = NetworkCondition.cellular
        var topUpEnd: Int64 = .min
        var lowPower = false, lowPowerOffered = false
        var lastHour = -1
        var t = first.timeMicros - ((first.timeMicros % step) + step) % step
        while t <= last.timeMicros {
            var launches = 0
            while index < events.count, events[index].timeMicros < t + step {
                offset = events[index].offset
                if events[index].isLaunch { launches += 1 }
                index += 1
            }
            let local = t + Int64(offset) * 1_000_000
            let localDay = Int((local - ((local % 86_400_000_000) + 86_400_000_000) % 86_400_000_000) / 86_400_000_000)
            let minuteOfDay = Double(((local % 86_400_000_000) + 86_400_000_000) % 86_400_000_000) / 60_000_000
            let hour = Int(minuteOfDay / 60)
            if localDay != day {
                day = localDay
                eveningWifi = rng.unit() < o.eveningWifiProbability
                plugAt = rng.unit() * o.plugJitterMinutes
                unplugAt = rng.unit() * o.plugJitterMinutes
            }
            let part = part(ofHour: hour)
            if part == 2 && hour != lastHour && t >= spellEnd {
                let r = rng.unit()
                if r < o.daytimeWifiProbability {
                    spellNetwork = .wifi
                    spellEnd = t + Int64((0.5 + rng.unit()) * o.daytimeWifiMinutes * 60_000_000)
                } else if r < o.daytimeWifiProbability + o.offlineProbability {
                    spellNetwork = .offline
                    spellEnd = t + Int64((0.5 + rng.unit()) * o.offlineMinutes * 60_000_000)
                }
            }
            lastHour = hour
            // Minutes since the night began and until it ends (night hours only).
            let sinceNight = (minuteOfDay - Double(nightStart) * 60 + 1440).truncatingRemainder(dividingBy: 1440)
            let plugged = part == 0 && sinceNight >= plugAt && sinceNight < Double(o.nightHours) * 60 - unplugAt
            let network: NetworkCondition =
                part == 0 || (part == 1 && eveningWifi) ? .wifi : (t < spellEnd ? spellNetwork : .cellular)
            if !plugged && part != 0 && battery < o.topUpBelow && t >= topUpEnd {
                topUpEnd = t + Int64(o.topUpMinutes * 60_000_000)
            }
            let charging = plugged || t < topUpEnd
            if charging {
                battery = min(100, battery + o.chargePerHour * stepHours)
                lowPower = false
                lowPowerOffered = false
            } else {
                battery = max(0, battery - o.drainPerHour * stepHours - o.drainPerLaunch * Double(launches))
                if battery < o.lowPowerBelow && !lowPowerOffered {
                    lowPowerOffered = true
                    lowPower = rng.unit() < o.lowPowerProbability
                }
            }
            let level = Int(battery.rounded())
            let power: PowerCondition = charging ? .charging : .battery
            var change = ConditionChange()
            if let r = reported {
                if r.network != network { change.network = network }
                if r.power != power { change.power = power }
                if r.low != lowPower { change.lowPower = lowPower }
                if abs(level - r.battery) >= o.batteryStep || (!change.isEmpty && level != r.battery) {
                    change.battery = UInt8(level)
                }
            } else {
                change = ConditionChange(network: network, power: power, battery: UInt8(level), lowPower: lowPower)
            }
            if !change.isEmpty {
                rows.append(Row(timeMicros: t, utcOffsetSeconds: offset, change: change))
                reported = (network, power, change.battery.map(Int.init) ?? reported!.battery, lowPower)
            }
            t += step
        }
        return rows
    }
}
