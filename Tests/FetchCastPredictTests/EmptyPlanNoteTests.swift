import FetchCastCore
import Testing
@testable import FetchCastModel
@testable import FetchCastPredict

/// An empty plan names its true cause, including why no look before the device's next pickup is
/// planned (issue 39 item 2), with the device's own counts and times.
struct EmptyPlanNoteTests {
    typealias Clock = PickupClockTests

    static func model(_ events: [DeviceEvent]) -> DeviceModel { Clock.follower(events).model }

    @Test func thePickupClocksRuleIsTheDevicesOwn() throws {
        let events = Clock.heavyUser()
        // Three days of use: the clock needs a week.
        let threeDays = events.filter { $0.time < Clock.monday + 3 * 86_400 }
        #expect(Self.model(threeDays).pickupClockRule(from: threeDays.last!.time + 3600) == .fewDays(3))
        // Four weeks: it looks, until 14 h after the last launch (22:20 on the 28th day).
        let model = Self.model(events)
        let last = try #require(events.last?.time)
        #expect(model.pickupClockRule(from: last + 3600) == nil)
        #expect(model.pickupClockRule(from: last + 14 * 3600 - 60) == nil)
        #expect(model.pickupClockRule(from: last + 14 * 3600) == .longSilence(lastLaunch: last, limit: 14 * 3600))
        // A week of use without a silence of 2 h: no pickup to learn from.
        var busy: [DeviceEvent] = []
        for day in 0..<8 {
            for hour in 0..<24 { busy.append(Clock.launch(Clock.mail, day: day, hour: Double(hour) + 20.0 / 60)) }
        }
        #expect(Self.model(busy).pickupClockRule(from: busy.last!.time + 3600) == .fewPickups(0))
    }

    /// Word for word, each kind of cause; the week rule comes first.
    @Test func eachCauseIsWorded() {
        let last = 1_700_000_000.0  // 2023-11-14T22:13:20Z
        let event = (time: last, tau: 1800.0)
        func note(_ rule: PickupClockRule?, from start: Double) -> String {
            EmptyPlanNote.sentence(device: "19_F", horizonHours: 24, lastEvent: event, from: start, budget: 24, pickupRule: rule)
        }
        let head = "nothing planned for 19_F in the next 24 hours: no fetch is worth a radio wakeup before its next event, "
            + "no habit of its apps falls in that time, and "
        let tail = " (ask again after its next event)"
        #expect(note(nil, from: last + 3600) == head + "no app's chance of being opened first after 2 h unused is worth one" + tail)
        #expect(note(.fewDays(3), from: last + 3600) == head + "looks before its first use after 2 h unused need 7 days of use (it has 3)" + tail)
        #expect(note(.fewPickups(1), from: last + 3600)
            == head + "looks before its first use after 2 h unused need 3 pickups (a launch after 2 h unused; it has 1)" + tail)
        #expect(note(.longSilence(lastLaunch: last - 7200, limit: 14 * 3600), from: last + 16 * 3600)
            == head + "looks before its first use after 2 h unused stop 14 hours after its last launch, 2023-11-14T20:13:20Z "
            + "(18 hours before the plan's start): the silence 1 in 10 of its pickups came after, at least 14 h and at most 24 h; "
            + "a longer one is more often a device switched off than a late first use" + tail)
        #expect(note(.longSilence(lastLaunch: last - 7200, limit: 18 * 3600), from: last + 20 * 3600)
            .contains("stop 18 hours after its last launch, 2023-11-14T20:13:20Z (22 hours before the plan's start): "))
        let silent = note(.longSilence(lastLaunch: last, limit: 14 * 3600), from: last + 8 * 86_400)
        #expect(silent.hasPrefix("nothing planned for 19_F in the next 24 hours: the device has been silent for 8 days"), "\(silent)")
        #expect(!silent.contains("looks before"))
    }

    /// From a model: the rule read at the plan's start, or at the device's last event.
    @Test func theModelsRuleReachesTheNote() throws {
        let events = Clock.heavyUser()
        let model = Self.model(events)
        let last = try #require(events.last?.time)
        let late = EmptyPlanNote.sentence(device: "d", horizonHours: 24, model: model, from: last + 15 * 3600, budget: 24)
        #expect(late.contains("stop 14 hours after its last launch, \(Timestamp.format(micros: Int64(last * 1_000_000), utcOffsetSeconds: 0)) (15 hours before the plan's start)"), "\(late)")
        let early = EmptyPlanNote.sentence(device: "d", horizonHours: 24, model: model, from: nil, budget: 24)
        #expect(early.contains("no app's chance of being opened first after 2 h unused is worth one"), "\(early)")
        let unknown = EmptyPlanNote.sentence(device: "d", horizonHours: 24, model: nil, from: last, budget: 24)
        #expect(unknown.contains("no app's chance of being opened first"), "\(unknown)")
    }
}
