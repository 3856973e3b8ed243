import FetchCastCore
@testable import FetchCastModel
@testable import FetchCastPredict
import Testing

/// The reasons `predict` prints: worded by the strength of the chance, saying when the times
/// come from other devices, one wording per kind of planned fetch.
struct ExplanationTests {
    static let names = ["com.whatsapp", "com.tencent.mm", "com.viber.voip"]
    /// Wednesday 2023-11-15 09:03:00 UTC.
    static let wednesday = 1_700_038_980.0

    static func reason(p: Double, newData: Double = 1, reason: FetchReason? = nil, ownSessions: Double = 20,
                       at time: Double = wednesday, habits: ConditionHabits = ConditionHabits()) -> String {
        let fetch = ScheduledFetch(app: 0, time: time, launchProbability: p, newDataProbability: newData,
                                   reason: reason ?? .likelyLaunch(probability: p))
        return Explanation.reason(for: fetch, device: "19_F", model: DeviceModel(), tau: 1800, ownSessions: ownSessions,
                                  habits: habits, name: { names[Int($0)] })
    }

    /// On Wi-Fi and charging Wednesday 08:00–10:00 UTC, then on cellular on battery until 12:00.
    static var habits: ConditionHabits {
        var habits = ConditionHabits()
        let eight = wednesday - 63 * 60
        habits.observe(DeviceConditions(network: .wifi, power: .charging), at: eight, utcOffsetSeconds: 0)
        habits.observe(DeviceConditions(network: .cellular, power: .battery), at: eight + 7200, utcOffsetSeconds: 0)
        habits.advance(to: eight + 4 * 3600)
        return habits
    }

    /// 09:00–10:00: an hour on Wi-Fi and charging, shrunk towards the 2 of 4 hours overall with an
    /// hour's weight: (3600 + 3600 × 0.5) / (3600 + 3600) = 75%; 11:00–12:00: (0 + 1800) / 7200.
    @Test func saysWhatTheStateRowsSayOfTheFetchsHour() {
        #expect(Self.reason(p: 0.3, habits: Self.habits)
            == "19_F often opens com.whatsapp 09:03–09:33 on weekdays (p=0.30); on Wi-Fi 75% and charging 75% of Wednesdays 09:00–10:00")
        #expect(Self.reason(p: 0.3, at: Self.wednesday + 2 * 3600, habits: Self.habits)
            == "19_F often opens com.whatsapp 11:03–11:33 on weekdays (p=0.30); on Wi-Fi only 25% of Wednesdays 11:00–12:00")
        #expect(!Self.reason(p: 0.3).contains("Wi-Fi"), "nothing without state rows")
    }

    @Test(arguments: [
        (0.62, "usually opens", "0.62"), (0.5, "usually opens", "0.50"), (0.496, "usually opens", "0.50"),
        (0.494, "often opens", "0.49"), (0.25, "often opens", "0.25"), (0.2, "sometimes opens", "0.20"),
        (0.1, "sometimes opens", "0.10"), (0.09, "may open", "0.09"), (0.0, "may open", "0.00"),
    ])
    func wordsTheLaunchChanceByItsBand(p: Double, words: String, printed: String) {
        #expect(Self.reason(p: p) == "19_F \(words) com.whatsapp 09:03–09:33 on weekdays (p=\(printed))")
    }

    @Test func bandsCoverEveryChanceOnceInOrder() {
        let bands = stride(from: 0.0, through: 1.0, by: 0.001).map { Explanation.Strength($0) }
        #expect(bands.first == .rarely && bands.last == .usually)
        // Each band appears, in one run, weakest first.
        var runs: [Explanation.Strength] = []
        for b in bands where runs.last != b { runs.append(b) }
        #expect(runs == [.rarely, .sometimes, .often, .usually])
    }

    @Test func saysWhenTheTimesComeFromOtherDevices() {
        let text = Self.reason(p: 0.2, ownSessions: 4.9)
        #expect(text == "devices like 19_F sometimes open com.whatsapp 09:03–09:33 on weekdays "
            + "(p=0.20; from other devices: 19_F has little history of com.whatsapp)")
        #expect(!Self.reason(p: 0.2, ownSessions: 5).contains("other devices"))
    }

    @Test func ownSessionsAreReadFromTheModelWhenNotGiven() {
        var model = DeviceModel()
        for day in 0..<3 {
            model.observe(DeviceEvent(time: Self.wednesday - Double(day) * 86_400, app: 0, kind: .launch))
        }
        let fetch = ScheduledFetch(app: 0, time: Self.wednesday + 86_400, launchProbability: 0.6, newDataProbability: 1,
                                   reason: .likelyLaunch(probability: 0.6))
        let text = Explanation.reason(for: fetch, device: "19_F", model: model, tau: 1800, name: { Self.names[Int($0)] })
        #expect(text.hasPrefix("devices like 19_F usually open com.whatsapp 09:03–09:33 on weekdays (p=0.60; from other devices"))
    }

    @Test func aFetchAfterAnotherAppsLaunchSaysWhichApp() {
        #expect(Self.reason(p: 0.31, reason: .coUsage(after: 1, probability: 0.31))
            == "right after com.tencent.mm, 19_F often opens com.whatsapp within 30 min (p=0.31)")
        #expect(Self.reason(p: 0.12, reason: .coUsage(after: 2, probability: 0.12), ownSessions: 0)
            == "right after com.viber.voip, devices like 19_F sometimes open com.whatsapp within 30 min "
            + "(p=0.12; from other devices: 19_F has little history of com.whatsapp)")
    }

    /// A fetch that joined a wakeup may owe its chance to any source (gaps, habit, hours): its
    /// reason names none, so it credits the chance to no kind of day.
    @Test func aCoalescedFetchNamesTheWakeupItJoins() {
        #expect(Self.reason(p: 0.27, newData: 0.4, reason: .coalesced(with: 2), at: Self.wednesday + 3 * 86_400)
            == "19_F often opens com.whatsapp 09:03–09:33 (p=0.27); new content possible (p=0.40); "
            + "coalesced with com.viber.voip")
    }

    /// A chance from the app's launch gaps says how long after its last use the window is, and
    /// credits nothing to the hour of the week (issue 27: "usually opens com.chat 21:15–21:45 on
    /// weekends" for a device that never opened chat then).
    @Test func aReturnVisitSaysHowLongAfterTheLastUse() {
        var model = DeviceModel()
        model.observe(DeviceEvent(time: Self.wednesday - 3 * 3600 - 600, app: 0, kind: .launch))
        let fetch = ScheduledFetch(app: 0, time: Self.wednesday, launchProbability: 0.89, newDataProbability: 1,
                                   reason: .returnVisit(probability: 0.89))
        let text = Explanation.reason(for: fetch, device: "19_F", model: model, tau: 1800, ownSessions: 20, name: { Self.names[Int($0)] })
        #expect(text == "19_F usually opens com.whatsapp again 09:03–09:33, 3 h 10 min after its last use (p=0.89)")
        #expect(!text.contains("weekend") && !text.contains("weekday"))
    }

    /// A habit's reason counts the days as a person checks them against their own week: the days
    /// of the same kind the device was used before the fetch's day, and those with a session in
    /// the fetch's half hour.
    @Test func aHabitCountsTheDaysOfItsWindow() {
        var model = DeviceModel()
        // Monday 2023-11-13 … Friday 2023-11-24 (UTC): whatsapp at 09:15 on 9 of those 10 weekdays
        // (not Thursday the 23rd), mm at noon every day, weekends too.
        let monday = 1_699_833_600.0
        for day in 0..<12 {
            let d = monday + Double(day) * 86_400
            if day % 7 < 5 && day != 10 { model.observe(DeviceEvent(time: d + 9.25 * 3600, app: 0, kind: .launch)) }
            model.observe(DeviceEvent(time: d + 12 * 3600, app: 1, kind: .launch))
        }
        // Planned for Monday the 27th, 09:03: the window 09:03–09:33 holds 09:15.
        let at = monday + 14 * 86_400 + 9 * 3600 + 180
        let fetch = ScheduledFetch(app: 0, time: at, launchProbability: 0.81, newDataProbability: 1, reason: .habit(probability: 0.81))
        let text = Explanation.reason(for: fetch, device: "19_F", model: model, tau: 1800, ownSessions: 20, name: { Self.names[Int($0)] })
        #expect(text == "19_F opened com.whatsapp between 09:03 and 09:33 on 9 of the last 10 weekdays it was used (p=0.81)")
        // On the Saturday after: the 2 weekend days, none of them with whatsapp. A count of 0
        // cannot be why a fetch is made (it once read "on 0 of the last 2 weekend days"): the
        // reason states the chance, which then came from the gaps and hours.
        let saturday = ScheduledFetch(app: 0, time: monday + 19 * 86_400 + 9 * 3600 + 180, launchProbability: 0.3, newDataProbability: 1,
                                      reason: .habit(probability: 0.3))
        let weekend = Explanation.reason(for: saturday, device: "19_F", model: model, tau: 1800, ownSessions: 20, name: { Self.names[Int($0)] })
        #expect(weekend == "19_F often opens com.whatsapp 09:03–09:33 (p=0.30)")
    }

    /// A habit of one day of the week counts that day: a meeting app opened at 09:15 on Mondays
    /// only, four weeks (3 of 3 Mondays against the weekdays' share would happen once in a
    /// hundred times or less), so its share was read from the Mondays.
    @Test func aHabitOfOneDayOfTheWeekCountsThatDay() {
        var model = DeviceModel()
        let monday = 1_699_833_600.0  // Monday 2023-11-13, UTC
        for day in 0..<28 {
            let d = monday + Double(day) * 86_400
            if day % 7 == 0 { model.observe(DeviceEvent(time: d + 9.25 * 3600, app: 0, kind: .launch)) }
            model.observe(DeviceEvent(time: d + 12 * 3600, app: 1, kind: .launch))
        }
        let at = monday + 28 * 86_400 + 9 * 3600 + 180
        let fetch = ScheduledFetch(app: 0, time: at, launchProbability: 0.61, newDataProbability: 1, reason: .habit(probability: 0.61))
        let text = Explanation.reason(for: fetch, device: "19_F", model: model, tau: 1800, ownSessions: 20, name: { Self.names[Int($0)] })
        #expect(text == "19_F opened com.whatsapp between 09:03 and 09:33 on 4 of the last 4 Mondays it was used (p=0.61)")
        // The Tuesday after: no Tuesday held a session of the app, which the weekdays' share of
        // days with it (4 of 20) gives 41% of the time: the weekdays speak, and are counted.
        let tuesday = ScheduledFetch(app: 0, time: at + 86_400, launchProbability: 0.1, newDataProbability: 1, reason: .habit(probability: 0.1))
        let weekdays = Explanation.reason(for: tuesday, device: "19_F", model: model, tau: 1800, ownSessions: 20, name: { Self.names[Int($0)] })
        #expect(weekdays == "19_F opened com.whatsapp between 09:03 and 09:33 on 4 of the last 20 weekdays it was used (p=0.10)")
        // A gym on Mondays, Wednesdays and Fridays at 06:15, four weeks: on a Tuesday the app's
        // days (0 of 4 Tuesdays against 12 of 20 weekdays) say it is not a day of the habit; its
        // share was read from the Tuesdays, none of which held a session: no count is cited.
        var gym = DeviceModel()
        for day in 0..<28 {
            let d = monday + Double(day) * 86_400
            if [0, 2, 4].contains(day % 7) { gym.observe(DeviceEvent(time: d + 6.25 * 3600, app: 0, kind: .launch)) }
            gym.observe(DeviceEvent(time: d + 12 * 3600, app: 1, kind: .launch))
        }
        let tuesdayGym = ScheduledFetch(app: 0, time: monday + 29 * 86_400 + 6 * 3600, launchProbability: 0.1, newDataProbability: 1,
                                        reason: .habit(probability: 0.1))
        let gymText = Explanation.reason(for: tuesdayGym, device: "19_F", model: gym, tau: 1800, ownSessions: 20, name: { Self.names[Int($0)] })
        #expect(gymText == "19_F sometimes opens com.whatsapp 06:00–06:30 (p=0.10)")
        #expect(gym.habitDays(app: 0, at: tuesdayGym.time) == HabitDays(days: 0, of: 4, weekend: false, weekday: 1))
    }

    /// Reasons only other policies make (a retry, say) keep the worded chance and add their own.
    @Test func aReasonThePlannerDoesNotMakeIsStillWordedByStrength() {
        #expect(Self.reason(p: 0.3, reason: .retry) == "19_F often opens com.whatsapp 09:03–09:33 on weekdays (p=0.30); retry after failure")
    }

    @Test(arguments: [(0.7, "likely", "0.70"), (0.3, "possible", "0.30"), (0.2, "unlikely", "0.20")])
    func wordsTheChanceOfNewContentByItsBand(p: Double, words: String, printed: String) {
        #expect(Self.reason(p: 0.6, newData: p).hasSuffix("(p=0.60); new content \(words) (p=\(printed))"))
        #expect(!Self.reason(p: 0.6, newData: 1).contains("new content"))
    }
}
