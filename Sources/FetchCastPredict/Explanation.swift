import FetchCastModel
import FetchCastTrace

/// Short human reasons for scheduling decisions, worded no stronger than their probabilities.
enum Explanation {
    /// How a reason words a probability: the one place where its bands are set. A chance is
    /// banded as printed (rounded to two decimals), so the words and the number agree.
    enum Strength: CaseIterable {
        /// p ≥ 0.5: more often than not.
        case usually
        /// 0.25 ≤ p < 0.5.
        case often
        /// 0.1 ≤ p < 0.25.
        case sometimes
        /// p < 0.1.
        case rarely

        /// The band of `probability`.
        init(_ probability: Double) {
            let p = (probability * 100).rounded() / 100
            switch p {
            case 0.5...: self = .usually
            case 0.25..<0.5: self = .often
            case 0.1..<0.25: self = .sometimes
            default: self = .rarely
            }
        }

        /// "usually opens" (`plural`: "usually open").
        func opens(plural: Bool) -> String {
            switch self {
            case .usually: plural ? "usually open" : "usually opens"
            case .often: plural ? "often open" : "often opens"
            case .sometimes: plural ? "sometimes open" : "sometimes opens"
            case .rarely: "may open"
            }
        }

        /// How likely new content is, in words.
        var content: String {
            switch self {
            case .usually: "likely"
            case .often: "possible"
            case .sometimes, .rarely: "unlikely"
            }
        }
    }

    /// Fewer present-day weighted sessions of an app than this and the device's times for it
    /// come mostly from other devices (the prior), and the reason says so.
    static let ownHistorySessions = 5.0

    static func clock(_ seconds: Double) -> String {
        let s = Int(seconds.rounded()) % 86_400
        let h = s / 3600, m = s % 3600 / 60
        return (h < 10 ? "0" : "") + String(h) + ":" + (m < 10 ? "0" : "") + String(m)
    }

    /// The app's present-day weighted sessions over the whole week: whether the device has
    /// enough history of its own to speak for itself. O(168); callers keep it per app.
    static func ownSessions(app: Int32, model: DeviceModel, now: Double) -> Double {
        (0..<HourOfWeek.count).reduce(0.0) { $0 + model.sessionCount(app: app, slot: $1, now: now) }
    }

    /// Why the planner chose `fetch`, e.g. "19_F sometimes opens com.whatsapp 09:03–09:33 on
    /// weekdays (p=0.20)", "right after com.tencent.mm, 19_F often opens com.viber.voip within
    /// 30 min (p=0.31)"; with little history of its own, "devices like 19_F … (p=0.20; from
    /// other devices: 19_F has little history of com.whatsapp)".
    static func reason(for fetch: ScheduledFetch, device: String, model: DeviceModel, tau: Double, ownSessions: Double? = nil,
                       habits: ConditionHabits = ConditionHabits(), lentByOthers: Bool = true, name: (Int32) -> String) -> String {
        let app = name(fetch.app)
        let now = model.lastEventTime ?? fetch.time
        let ownSessions = ownSessions ?? Self.ownSessions(app: fetch.app, model: model, now: now)
        // With little history of its own, the device's times come from other devices (the
        // prior), or, when no other device lent any (a store's only device), from a generic day.
        let littleHistory = ownSessions < ownHistorySessions
        let fromOthers = littleHistory && lentByOthers
        let who = fromOthers ? "devices like \(device)" : device
        let opens = Strength(fetch.launchProbability).opens(plural: fromOthers)
        var p = "p=" + fixed(fetch.launchProbability)
        if fromOthers { p += "; from other devices: \(device) has little history of \(app)" }
        if littleHistory && !lentByOthers {
            p += "; from a generic day: \(device) has little history of \(app), and no other device in the store has any to lend"
        }
        var text: String
        switch fetch.reason {
        case .coUsage(let after, _):
            text = "right after \(name(after)), \(who) \(opens) \(app) within \(minutes(tau)) (\(p))"
        case .habit:
            // The days as a person counts them on their own calendar (the chance weighs recent
            // days more, and 4 pseudo-days at the gaps' and hours' chance placed in the hour).
            // The days are cited only when some of them hold a session in the window: a count of
            // 0 cannot be why a fetch is made (its chance then came from the gaps and hours
            // placed in the window, which the words below state).
            if let h = model.habitDays(app: fetch.app, at: fetch.time), h.days > 0 {
                text = "\(device) opened \(app) between \(clockWindow(fetch.time, tau: tau, offset: model.lastOffset, separator: " and ")) "
                    + "on \(h.days) of the last \(h.of) \(h.daysCounted) it was used (p=\(fixed(fetch.launchProbability)))"
            } else {
                text = "\(who) \(opens) \(app) \(clockWindow(fetch.time, tau: tau, offset: model.lastOffset)) (\(p))"
            }
        case .pickup:
            // The counts the chance is the recency-weighted form of, as a person counts them: the
            // days still silent at the look's time of day, those first used by the window's end,
            // and, of its pickups at any time of day, those that began with the app.
            if let w = model.pickupWindow(app: fetch.app, at: fetch.time), w.pickupDays > 0, w.appPickups > 0 {
                let kind = w.everyDay ? (w.observedDays == 1 ? "day" : "days")
                    : w.weekend ? (w.observedDays == 1 ? "weekend day" : "weekend days") : (w.observedDays == 1 ? "weekday" : "weekdays")
                func local(_ x: Double) -> String { clock(x - (x / 86_400).rounded(.down) * 86_400) }
                text = "\(device) was first used by \(local(w.end)) on \(w.pickupDays) of the \(w.observedDays) \(kind) it was still silent at "
                    + "\(local(w.start)), and \(w.appPickups) of its last \(w.pickups) \(w.pickups == 1 ? "pickup" : "pickups") after 2 h unused began with \(app) (p=\(fixed(fetch.launchProbability)))"
            } else {
                text = "\(who) \(opens) \(app) \(clockWindow(fetch.time, tau: tau, offset: model.lastOffset)) (\(p))"
            }
        case .returnVisit:
            let since = model.lastLaunch(of: fetch.app).map { ", " + minutes(max(0, fetch.time - $0)) + " after its last use" } ?? ""
            text = "\(who) \(opens) \(app) again \(clockWindow(fetch.time, tau: tau, offset: model.lastOffset))\(since) (\(p))"
        case .coalesced:
            // Joined a wakeup: its chance may come from any source, so no source is named.
            text = "\(who) \(opens) \(app) \(clockWindow(fetch.time, tau: tau, offset: model.lastOffset)) (\(p))"
        case .likelyLaunch:
            text = "\(who) \(opens) \(app) \(window(fetch.time, tau: tau, offset: model.lastOffset)) (\(p))"
        case .policy, .retry:
            // Not made by the planner; worded from the launch chance all the same.
            text = "\(who) \(opens) \(app) \(window(fetch.time, tau: tau, offset: model.lastOffset)) (\(p)); "
                + fetch.reason.describe(name)
        }
        if fetch.newDataProbability < 0.999 {
            text += "; new content \(Strength(fetch.newDataProbability).content) (p=\(fixed(fetch.newDataProbability)))"
        }
        if case .coalesced(let with) = fetch.reason {
            text += "; coalesced with \(name(with))"
        }
        if let note = conditions(at: fetch.time, habits: habits, offset: model.lastOffset) { text += "; " + note }
        return text
    }

    /// What the device's `state` rows say of the hour of the week a fetch falls in: "on Wi-Fi
    /// 82% of Mondays 19:00–20:00", "on Wi-Fi only 18% and charging 90% of Sundays 02:00–03:00"
    /// (charging when it usually is); `nil` without `state` rows. The scheduler's bar is lower
    /// on Wi-Fi and higher on cellular (docs/conditions.md), so this is part of why a moment
    /// was or was not chosen.
    static func conditions(at time: Double, habits: ConditionHabits, offset: Int32) -> String? {
        guard !habits.isEmpty else { return nil }
        let slot = HourOfWeek.slot(time, offset: offset)
        let hour = slot % 24
        var parts: [String] = []
        if let wifi = habits.wifiShare(slot: slot) { parts.append("on Wi-Fi \(wifi < 0.5 ? "only " : "")\(percent(wifi))") }
        if let charging = habits.chargingShare(slot: slot), charging >= 0.5 { parts.append("charging \(percent(charging))") }
        guard !parts.isEmpty else { return nil }
        return parts.joined(separator: " and ") + " of \(weekdays[slot / 24]) \(clock(Double(hour) * 3600))–\(clock(Double(hour + 1) * 3600))"
    }

    private static let weekdays = ["Mondays", "Tuesdays", "Wednesdays", "Thursdays", "Fridays", "Saturdays", "Sundays"]

    private static func percent(_ share: Double) -> String { "\(Int((share * 100).rounded()))%" }

    /// "09:03–09:33 on weekdays": the fetch's freshness window in the device's local time, and
    /// the kind of day whose hours the chance comes from.
    private static func window(_ time: Double, tau: Double, offset: Int32) -> String {
        let day = HourOfWeek.slot(time, offset: offset) / 24
        return "\(clockWindow(time, tau: tau, offset: offset)) \(day >= 5 ? "on weekends" : "on weekdays")"
    }

    /// "09:03–09:33" (or "09:03 and 09:33" with another separator): the fetch's freshness window
    /// in the device's local time.
    private static func clockWindow(_ time: Double, tau: Double, offset: Int32, separator: String = "–") -> String {
        let local = time + Double(offset)
        let secondOfDay = local - (local / 86_400).rounded(.down) * 86_400
        return "\(clock(secondOfDay))\(separator)\(clock(secondOfDay + tau))"
    }

    /// "30 min", "2 h", "1 h 30 min".
    private static func minutes(_ seconds: Double) -> String {
        let m = Int((seconds / 60).rounded())
        if m < 60 { return "\(m) min" }
        return m % 60 == 0 ? "\(m / 60) h" : "\(m / 60) h \(m % 60) min"
    }

    private static func fixed(_ p: Double) -> String { CSVField.fixed(p, decimals: 2) }
}
