import FetchCastModel
import FetchCastTrace

/// Short human reasons for scheduling decisions.
enum Explanation {
    static func clock(_ seconds: Double) -> String {
        let s = Int(seconds.rounded()) % 86_400
        let h = s / 3600, m = s % 3600 / 60
        return (h < 10 ? "0" : "") + String(h) + ":" + (m < 10 ? "0" : "") + String(m)
    }

    static func reason(for fetch: ScheduledFetch, device: String, model: DeviceModel, tau: Double, name: (Int32) -> String) -> String {
        let local = fetch.time + Double(model.lastOffset)
        let secondOfDay = local - (local / 86_400).rounded(.down) * 86_400
        let slot = HourOfWeek.slot(fetch.time, offset: model.lastOffset)
        let day = slot / 24
        let dayText = day >= 5 ? "on weekends" : "on weekdays"
        var text = "\(device) usually opens \(name(fetch.app)) \(clock(secondOfDay))–\(clock(secondOfDay + tau)) \(dayText) (p=\(CSVField.fixed(fetch.launchProbability, decimals: 2)))"
        if fetch.newDataProbability < 0.999 {
            text += "; new content likely (p=\(CSVField.fixed(fetch.newDataProbability, decimals: 2)))"
        }
        if case .coalesced(let with) = fetch.reason {
            text += "; coalesced with \(name(with))"
        }
        return text
    }
}
