import FetchCastModel
import FetchCastTrace

/// Short human reasons for scheduling decisions.
enum Explanation {
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

    static func reason(for fetch: ScheduledFetch, device: String, model: DeviceModel, tau: Double, ownSessions: Double? = nil,
                       name: (Int32) -> String) -> String {
        let local = fetch.time + Double(model.lastOffset)
        let secondOfDay = local - (local / 86_400).rounded(.down) * 86_400
        let slot = HourOfWeek.slot(fetch.time, offset: model.lastOffset)
        let day = slot / 24
        let dayText = day >= 5 ? "on weekends" : "on weekdays"
        let now = model.lastEventTime ?? fetch.time
        let ownSessions = ownSessions ?? Self.ownSessions(app: fetch.app, model: model, now: now)
        // With little history of its own, the device's times come from other devices (the prior).
        let who = ownSessions < 5 ? "devices like \(device) usually open" : "\(device) usually opens"
        var text = "\(who) \(name(fetch.app)) \(clock(secondOfDay))–\(clock(secondOfDay + tau)) \(dayText) (p=\(CSVField.fixed(fetch.launchProbability, decimals: 2)))"
        if fetch.newDataProbability < 0.999 {
            text += "; new content likely (p=\(CSVField.fixed(fetch.newDataProbability, decimals: 2)))"
        }
        if case .coalesced(let with) = fetch.reason {
            text += "; coalesced with \(name(with))"
        }
        return text
    }
}
