import Foundation

/// The counts a reason cites, counted from a trace's launches by the rules docs/model.md states
/// ("Habits", "The pickup clock"), for ``ReasonCountTests``: written from each past day's side
/// (which launches surround this moment of that day?), not as the model's logs keep them, so
/// that the two agree only if both follow the rules.
struct HistoryCounts {
    /// One launch: Unix seconds, the local time (plus its UTC offset) and the app.
    struct Launch: Comparable {
        var utc: Double
        var local: Double
        var app: String

        static func < (a: Launch, b: Launch) -> Bool { (a.utc, a.app) < (b.utc, b.app) }
    }

    struct PickupCounts: Equatable, CustomStringConvertible {
        var firstUsed: Int
        var atRisk: Int
        var beganWith: Int
        var pickups: Int
        var description: String { "first used on \(firstUsed) of \(atRisk) days at risk, \(beganWith) of \(pickups) pickups began with the app" }
    }

    struct HabitCounts: Equatable, CustomStringConvertible {
        var withSession: Int
        var counted: Int
        var description: String { "\(withSession) of \(counted) days" }
    }

    /// The days a habit reason counts.
    enum DaysCounted {
        case weekdays, weekend
        case dayOfWeek(Int)
    }

    static let tau = 1800.0
    /// A silence of the whole device at least this long makes its next launch a pickup.
    static let silence = 7200.0
    /// The pickups the model keeps, and each app's sessions and the days of use.
    static let pickupsKept = 96, sessionsKept = 64, daysKept = 64
    /// The recency weighting of the pickup clock's chance: a day this long before counts half.
    static let halfLifeDays = 21.0
    static let dayNames = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]

    /// Each device's launches, in time order (a row repeated in the files counts once, as the
    /// store keeps it).
    private var byDevice: [String: [Launch]] = [:]

    init(csv texts: [String]) throws {
        var seen: [String: Set<String>] = [:]
        for text in texts {
            var lines = text.split(separator: "\n", omittingEmptySubsequences: true).makeIterator()
            guard let header = lines.next()?.split(separator: ",", omittingEmptySubsequences: false).map(String.init),
                  let time = header.firstIndex(of: "time"), let device = header.firstIndex(of: "device"),
                  let app = header.firstIndex(of: "app"), let event = header.firstIndex(of: "event")
            else { throw CocoaError(.fileReadCorruptFile) }
            while let line = lines.next() {
                let f = line.split(separator: ",", omittingEmptySubsequences: false)
                guard f.count > event, f[event] == "launch" else { continue }
                guard seen[String(f[device]), default: []].insert("\(f[time]),\(f[app])").inserted else { continue }
                guard let utc = Self.unixSeconds(String(f[time])), let offset = Self.utcOffset(String(f[time])) else {
                    throw CocoaError(.fileReadCorruptFile)
                }
                byDevice[String(f[device]), default: []].append(Launch(utc: utc, local: utc + Double(offset), app: String(f[app])))
            }
        }
        for key in byDevice.keys { byDevice[key]!.sort() }
    }

    /// The device's launches strictly before `time`: what a plan from `time` knows.
    func launches(of device: String, before time: Double) -> [Launch] {
        (byDevice[device] ?? []).filter { $0.utc < time }
    }

    // MARK: The pickup clock

    /// A pickup reason's counts for the window `(windowStart, windowStart + τ]` (local time) and
    /// the chance they give. Of the days before the window's day, of its kind (weekday or
    /// weekend, or every day), each day's moment at the window's start is *at risk* when the
    /// device's launches around it are a silence of at least 2 h whose pickup the model still
    /// keeps (one of the latest 96), begun at least 2 h − τ before the moment; the day was *first
    /// used* in the window when that pickup came by the window's end. Of the kept pickups before
    /// the window's day, those whose launch was of `app`. The chance is the product of the two
    /// shares, each day weighted 2^(−days before the window's day / 21).
    static func pickup(_ launches: [Launch], app: String, windowStart: Double, everyDay: Bool) -> (counts: PickupCounts, probability: Double) {
        let windowDay = day(windowStart)
        let x = windowStart - Double(windowDay) * 86_400
        // The pickups (a launch after ≥ 2 h of the device's silence; the first launch is none).
        let pickupIndices = launches.indices.dropFirst().filter { launches[$0].utc - launches[$0 - 1].utc >= silence }
        let kept = Array(pickupIndices.suffix(pickupsKept))
        let firstKept = kept.first ?? launches.endIndex
        var atRisk = 0, firstUsed = 0, wAtRisk = 0.0, wFirstUsed = 0.0
        if let first = launches.first {
            for d in day(first.local)..<windowDay where everyDay || isWeekend(d) == isWeekend(windowDay) {
                let moment = Double(d) * 86_400 + x
                // The first launch after the moment, and the one before it.
                let next = firstIndex(in: launches) { $0.local > moment }
                guard next < launches.endIndex, next > 0, next >= firstKept else { continue }
                let (before, after) = (launches[next - 1], launches[next])
                guard after.utc - before.utc >= silence, moment >= before.local + silence - tau else { continue }
                let w = weight(windowDay - d)
                atRisk += 1
                wAtRisk += w
                if after.local <= moment + tau {
                    firstUsed += 1
                    wFirstUsed += w
                }
            }
        }
        let earlier = kept.map { launches[$0] }.filter { day($0.local) < windowDay }
        let began = earlier.filter { $0.app == app }
        let wEarlier = earlier.reduce(0) { $0 + weight(windowDay - day($1.local)) }
        let wBegan = began.reduce(0) { $0 + weight(windowDay - day($1.local)) }
        let p = wAtRisk > 0 && wEarlier > 0 ? wFirstUsed / wAtRisk * wBegan / wEarlier : 0
        return (PickupCounts(firstUsed: firstUsed, atRisk: atRisk, beganWith: began.count, pickups: earlier.count), p)
    }

    /// The first index whose launch satisfies `isAfter` (false then true along the array: the
    /// traces' local times rise with their times), by bisection.
    static func firstIndex(in launches: [Launch], where isAfter: (Launch) -> Bool) -> Int {
        var (low, high) = (launches.startIndex, launches.endIndex)
        while low < high {
            let mid = (low + high) / 2
            if isAfter(launches[mid]) { high = mid } else { low = mid + 1 }
        }
        return low
    }

    // MARK: Habits

    /// A habit reason's counts for `app` in the window `(windowStart, windowStart + τ]` (local):
    /// the days counted are the device's latest 64 days of use before the window's day (the last
    /// one only if the window had passed by its last launch; none older than the app's oldest of
    /// its latest 64 sessions when it has that many), of the days the reason names; those with a
    /// session of the app (a launch more than τ after its previous one) starting in the window.
    static func habit(_ launches: [Launch], app: String, windowStart: Double, days named: DaysCounted) -> HabitCounts {
        let windowDay = day(windowStart)
        let x = windowStart - Double(windowDay) * 86_400
        var sessions: [Double] = []
        var previous: Double?
        for l in launches where l.app == app {
            if previous.map({ l.utc - $0 > tau }) ?? true { sessions.append(l.local) }
            previous = l.utc
        }
        sessions = Array(sessions.suffix(sessionsKept))
        let daysOfUse = Array(Set(launches.map { day($0.local) }).sorted().suffix(daysKept))
        let oldest = sessions.count >= sessionsKept ? day(sessions[0]) : Int.min
        let lastLocal = launches.last?.local
        let counted = daysOfUse.filter { d in
            guard d < windowDay, d >= oldest else { return false }
            if let lastLocal, d == day(lastLocal) { return Double(d) * 86_400 + x + tau <= lastLocal }
            return true
        }.filter { d in
            switch named {
            case .weekdays: !isWeekend(d)
            case .weekend: isWeekend(d)
            case .dayOfWeek(let i): weekday(d) == i
            }
        }
        let withSession = counted.filter { d in
            let from = Double(d) * 86_400 + x
            return sessions.contains { $0 > from && $0 <= from + tau }
        }
        return HabitCounts(withSession: withSession.count, counted: counted.count)
    }

    // MARK: Time

    static func day(_ local: Double) -> Int { Int((local / 86_400).rounded(.down)) }
    /// Monday = 0 … Sunday = 6 (1970-01-01 was a Thursday).
    static func weekday(_ day: Int) -> Int { ((day + 3) % 7 + 7) % 7 }
    static func isWeekend(_ day: Int) -> Bool { weekday(day) >= 5 }
    static func weight(_ daysBefore: Int) -> Double { exp2(-Double(daysBefore) / halfLifeDays) }

    /// "HH:MM–HH:MM" of two local times.
    static func clock(_ from: Double, _ to: Double) -> String {
        func hm(_ t: Double) -> String {
            let m = Int(t - Double(day(t)) * 86_400) / 60
            return String(format: "%02d:%02d", m / 60, m % 60)
        }
        return "\(hm(from))–\(hm(to))"
    }

    /// Unix seconds of `YYYY-MM-DDTHH:MM:SS[.fff](Z|±HH:MM)` or of plain seconds.
    static func unixSeconds(_ s: String) -> Double? {
        if let plain = Double(s) { return plain }
        let c = Array(s.utf8)
        guard c.count >= 20, let offset = utcOffset(s) else { return nil }
        func int(_ r: Range<Int>) -> Int? { Int(String(decoding: c[r], as: UTF8.self)) }
        guard let y = int(0..<4), let mo = int(5..<7), let d = int(8..<10), let h = int(11..<13), let mi = int(14..<16),
              var sec = Double(String(decoding: c[17..<19], as: UTF8.self))
        else { return nil }
        if c[19] == UInt8(ascii: "."), let end = c[19...].firstIndex(where: { $0 == UInt8(ascii: "Z") || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-") }) {
            sec += Double("0" + String(decoding: c[19..<end], as: UTF8.self)) ?? 0
        }
        // Days from the civil date (Howard Hinnant's algorithm).
        let yy = mo <= 2 ? y - 1 : y
        let era = (yy >= 0 ? yy : yy - 399) / 400
        let yoe = yy - era * 400
        let doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        let days = era * 146_097 + doe - 719_468
        return Double(days * 86_400 + h * 3600 + mi * 60) + sec - Double(offset)
    }

    /// The UTC offset, seconds, of an ISO 8601 time's suffix (`Z`, `±HH:MM`); 0 for plain seconds.
    static func utcOffset(_ s: String) -> Int? {
        if Double(s) != nil || s.hasSuffix("Z") { return 0 }
        let c = Array(s.utf8)
        guard c.count >= 6 else { return nil }
        let sign = c[c.count - 6]
        guard sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-"),
              let h = Int(String(decoding: c[(c.count - 5)..<(c.count - 3)], as: UTF8.self)),
              let m = Int(String(decoding: c[(c.count - 2)...], as: UTF8.self))
        else { return nil }
        return (sign == UInt8(ascii: "+") ? 1 : -1) * (h * 3600 + m * 60)
    }
}
