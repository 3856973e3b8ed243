import FetchCastCore
import Foundation

/// Three simulated weeks of a commuter's phone (UTC+01:00), as the app records them: the launches
/// of three apps and the results of their background fetches. Fixed, so every run prints the same.
enum SimulatedWeek {
    /// How many weeks of the same routine.
    static let weeks = 3
    /// The phone's time zone.
    static let timeZone = TimeZone(secondsFromGMT: 3600)!
    /// Monday 2026-11-02 00:00 +01:00, the first day.
    static let monday = Date(timeIntervalSince1970: 1_794_783_600 - 14 * 86_400)
    /// Monday 2026-11-23 07:40 +01:00, the morning after the last week: the user opens the
    /// news app (the last event), and when it goes to the background, a second later, the app
    /// asks for the plan.
    static let now = monday.addingTimeInterval(Double(weeks * 7 * 86_400 + 7 * 3600 + 40 * 60 + 1))

    /// A launch (`result == nil`) or a finished background fetch.
    struct Event {
        var date: Date
        var app: String
        var result: FetchResult?

        /// What the event is: a launch, or a fetch's result.
        var kind: EventKind { result == nil ? .launch : .fetch }
    }

    /// The events in time order (``InstantOrder`` within an instant).
    static func events() -> [Event] {
        let news = "com.example.news", mail = "com.example.mail", podcasts = "com.example.podcasts"
        var events: [Event] = []
        for day in 0..<(weeks * 7) {
            // A few minutes' jitter from day to day, the same on every run.
            let jitter = Double((day * 7) % 11 - 5)
            func at(_ hour: Int, _ minute: Int, _ app: String, _ result: FetchResult? = nil) {
                let seconds = Double(day * 86_400 + hour * 3600 + minute * 60) + jitter * 60
                events.append(Event(date: monday.addingTimeInterval(seconds), app: app, result: result))
            }
            // Background fetches the app already makes: news has something new every morning
            // but not at night; the podcast publishes on Mondays and Thursdays.
            at(3, 0, news, .noData)
            at(6, 30, news, .newData)
            at(6, 30, podcasts, day % 7 == 0 || day % 7 == 3 ? .newData : .noData)
            if day % 7 < 5 {
                // Weekdays: news and a podcast on the way to work, mail at the desk, news at
                // lunch, a podcast on the way home, news in the evening.
                at(7, 40, news); at(7, 47, podcasts)
                at(8, 55, mail); at(12, 35, news); at(13, 10, mail)
                at(17, 30, mail); at(18, 5, podcasts); at(21, 45, news)
            } else {
                // Weekends: later and fewer.
                at(9, 20, news); at(10, 5, mail); at(20, 30, news)
            }
        }
        // Monday morning: the news app is opened, as on every weekday.
        events.append(Event(date: now.addingTimeInterval(-1), app: news, result: nil))
        // In time order, each instant's events in the order a scheduler is told of them
        // (`InstantOrder`: publishes, `state` rows, then launches and fetches as recorded).
        InstantOrder.sort(&events, time: \.date, step: { InstantOrder.step(of: $0.kind) })
        return events
    }
}
