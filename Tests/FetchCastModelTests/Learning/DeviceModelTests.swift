import FetchCastModel
import FetchCastTrace
import Testing

struct DeviceModelTests {
    let base = 1_700_000_000.0  // 2023-11-14T22:13:20Z, a Tuesday

    func launch(_ t: Double, _ app: Int32, offset: Int32 = 0) -> DeviceEvent {
        DeviceEvent(time: t, utcOffsetSeconds: offset, app: app, kind: .launch)
    }

    @Test func learnsTheHourOfWeekOfSessionsInLocalTime() {
        var model = DeviceModel()
        // Every day at 08:10 local (UTC+2) for four weeks, plus some other app to give exposure.
        let midnight = (base / 86_400).rounded(.down) * 86_400
        for day in 0..<28 {
            let d = midnight + Double(day) * 86_400
            model.observe(launch(d + 8 * 3600 + 600 - 7200, 1, offset: 7200))
            for h in stride(from: 0.0, to: 24, by: 3) { model.observe(launch(d + h * 3600 + 1800, 2, offset: 7200)) }
        }
        let now = model.lastEventTime!
        let slotAt8 = HourOfWeek.slot(midnight + 8 * 3600 + 600 - 7200, offset: 7200)
        #expect(slotAt8 % 24 == 8)
        let rateAt8 = model.sessionRate(app: 1, slot: slotAt8, now: now, prior: .none)
        let rateAt3 = model.sessionRate(app: 1, slot: slotAt8 - 5, now: now, prior: .none)
        #expect(rateAt8 > 0.5)
        #expect(rateAt8 > 10 * rateAt3)
    }

    @Test func aLaunchWithinTauIsNotASession() {
        var model = DeviceModel()
        model.observe(launch(base, 1))
        model.observe(launch(base + 600, 1))  // 10 min later: same session
        model.observe(launch(base + 600 + 1801, 1))  // > τ after the previous launch: new session
        let slot0 = HourOfWeek.slot(base, offset: 0)
        let total = (0..<HourOfWeek.count).map { model.sessionCount(app: 1, slot: $0, now: base + 3000) }.reduce(0, +)
        #expect(abs(total - 2) < 0.01, "two sessions, weighted almost 1 each")
        #expect(model.sessionCount(app: 1, slot: slot0, now: base + 3000) > 0)
    }

    @Test func recentEvidenceOutweighsOldEvidence() {
        var model = DeviceModel()
        model.observe(launch(base, 1))
        model.observe(launch(base + 63 * 86_400, 2))  // three half-lives later
        let now = base + 63 * 86_400
        let old = (0..<HourOfWeek.count).map { model.sessionCount(app: 1, slot: $0, now: now) }.reduce(0, +)
        let new = (0..<HourOfWeek.count).map { model.sessionCount(app: 2, slot: $0, now: now) }.reduce(0, +)
        #expect(abs(old - 0.125) < 0.01)
        #expect(abs(new - 1) < 0.01)
    }

    @Test func longSilenceIsNotExposure() {
        var model = DeviceModel()
        model.observe(launch(base, 1))
        model.observe(launch(base + 3600, 1))
        model.observe(launch(base + 10 * 86_400, 1))  // ten days without events: not observed
        let hours = model.observedHours(at: base + 10 * 86_400)
        #expect(hours < 1.01 && hours > 0.5)
    }

    @Test func coUsageLearnsWhatFollowsALaunch() {
        var model = DeviceModel()
        for day in 0..<20 {
            let t = base + Double(day) * 86_400
            model.observe(launch(t, 1))
            model.observe(launch(t + 120, 2))  // 2 always follows 1 within τ
            model.observe(launch(t + 7200, 3))  // 3 comes two hours later
        }
        let now = model.lastEventTime!
        let p12 = model.coUsageProbability(from: 1, to: 2, now: now, prior: .none)
        let p13 = model.coUsageProbability(from: 1, to: 3, now: now, prior: .none)
        #expect(p12 > 0.6)
        #expect(p13 < 0.2)
        let response = model.responseProbability(app: 2, at: now + 86_400 + 1, after: 1, triggerTime: now + 86_400, now: now, prior: .none)
        #expect(response > p13)
    }

    @Test(arguments: [0 as UInt64, 1, 2, 3, 4])
    func everyProbabilityIsBetweenZeroAndOne(seed: UInt64) {
        var model = DeviceModel()
        var rng = SeededGenerator(seed: seed)
        for e in habitTrace(seed: seed) {
            model.observe(e)
            if Int.random(in: 0..<10, using: &rng) == 0 {
                model.observe(DeviceEvent(time: e.time + 1, utcOffsetSeconds: e.utcOffsetSeconds, app: e.app, kind: .fetch,
                                          result: Bool.random(using: &rng) ? .newData : .noData))
            }
        }
        let now = model.lastEventTime!
        for app in Int32(0)..<6 {
            for k in 0..<48 {
                let t = now + Double(k) * 1800
                let probabilities = [
                    model.sessionProbability(app: app, from: t, to: t + 1800, now: now, prior: .none),
                    model.returnProbability(app: app, from: t, now: now, prior: .none) ?? 0,
                    model.coUsageProbability(from: (app + 1) % 6, to: app, now: now, prior: .none),
                    model.responseProbability(app: app, at: t, after: (app + 1) % 6, triggerTime: t - 1, now: now, prior: .none),
                    model.newDataProbability(app: app, at: t, since: now - 3600, now: now),
                ]
                for p in probabilities { #expect(p >= 0 && p <= 1, "\(p)") }
            }
        }
    }

    @Test func publishesTeachQuietHours() {
        var model = DeviceModel()
        let midnight = (base / 86_400).rounded(.down) * 86_400
        for day in 0..<21 {
            let d = midnight + Double(day) * 86_400
            model.observe(launch(d + 12 * 3600, 1))
            // News every 10 minutes from 07:00 to 23:00, nothing at night.
            for minute in stride(from: 7 * 60, to: 23 * 60, by: 10) {
                model.observe(DeviceEvent(time: d + Double(minute) * 60, app: 9, kind: .publish))
            }
        }
        let now = model.lastEventTime!
        let night = midnight + 21 * 86_400 + 3 * 3600
        let noon = midnight + 21 * 86_400 + 12 * 3600
        let pNight = model.newDataProbability(app: 9, at: night + 1800, since: night, now: now)
        let pNoon = model.newDataProbability(app: 9, at: noon + 1800, since: noon, now: now)
        #expect(pNight < 0.1)
        #expect(pNoon > 0.9)
    }

    @Test func stateRoundTripsThroughCodable() throws {
        var model = DeviceModel()
        for e in habitTrace(seed: 7, days: 3) { model.observe(e) }
        let data = try JSONEncoderBox.encode(model)
        let decoded = try JSONEncoderBox.decode(DeviceModel.self, data)
        let now = model.lastEventTime!
        #expect(decoded.sessionProbability(app: 1, from: now, to: now + 1800, now: now, prior: .none)
            == model.sessionProbability(app: 1, from: now, to: now + 1800, now: now, prior: .none))
    }
}

import Foundation
import FetchCastTestSupport

enum JSONEncoderBox {
    static func encode<T: Encodable>(_ v: T) throws -> Data { try JSONEncoder().encode(v) }
    static func decode<T: Decodable>(_ t: T.Type, _ d: Data) throws -> T { try JSONDecoder().decode(t, from: d) }
}

struct SessionRatesTests {
    @Test func allSlotsAtOnceEqualOneSlotAtATime() {
        var model = DeviceModel()
        for e in habitTrace(seed: 3) { model.observe(e) }
        let now = model.lastEventTime!
        for app in Int32(0)..<3 {
            let all = model.sessionRates(app: app, now: now, prior: .none)
            for slot in stride(from: 0, to: 168, by: 7) {
                let one = model.sessionRate(app: app, slot: slot, now: now, prior: .none)
                #expect(abs(all[slot] - one) <= 1e-12 * max(1, one))
            }
        }
    }
}
