@testable import FetchCastModel
import Testing

/// Which fetches of a plan are sent, when, and when they are expected, computed by hand for the push services' defaults (docs/push.md, "Sending early").
struct PushTimingTests {
    static func plan(_ fetches: [(app: Int32, time: Double)]) -> [ScheduledFetch] {
        fetches.map { ScheduledFetch(app: $0.app, time: $0.time, launchProbability: 0.5, newDataProbability: 1, reason: .habit(probability: 0.5)) }
    }

    static func view(lastLaunch: Double? = nil, charging: Bool = false, lastFetch: [Int32: Double] = [:]) -> PushTiming.DeviceView {
        PushTiming.DeviceView(lastLaunch: lastLaunch, charging: charging, lastFetch: lastFetch)
    }

    static func pushes(_ fetches: [(app: Int32, time: Double)], from now: Double = 0, _ kind: DeliveryOptions.Kind,
                       view: PushTiming.DeviceView = view()) -> [[Double]] {
        PushTiming.pushes(for: plan(fetches), from: now, delivery: DeliveryOptions(kind: kind), device: view).map {
            [Double($0.index), $0.sendAt, $0.deliveredAt]
        }
    }

    @Test func directSendsEveryFetchAtItsTime() {
        #expect(Self.pushes([(1, 1000), (1, 1100)], .direct) == [[0, 1000, 1000], [1, 1100, 1100]])
    }

    /// APNs: 2 an hour, a bucket of 1 (T = 1800 s). A push 600 s after the app's last would be
    /// held until 2800 (not on time) and hold the next: it is not sent; one at 5000 conforms.
    @Test func apnsSkipsAPushTheThrottleWouldHold() {
        #expect(Self.pushes([(1, 1000), (1, 1600), (2, 1700), (1, 5000)], .apns) == [[0, 1000, 1000], [2, 1700, 1700], [3, 5000, 5000]])
    }

    /// The bucket as the app's last fetch left it: a fetch at 0 lets the next through from 1800.
    @Test func apnsReadsTheBucketFromTheAppsLastFetch() {
        let view = Self.view(lastFetch: [1: 0])
        #expect(Self.pushes([(1, 1000), (2, 1000), (1, 1800)], .apns, view: view) == [[1, 1000, 1000], [2, 1800, 1800]])
    }

    /// Never before the plan's start.
    @Test func aFetchDueBeforeThePlanStartIsSentAtIt() {
        #expect(Self.pushes([(1, 100)], from: 500, .apns) == [[0, 500, 500]])
    }

    /// FCM, last launch at 0: the device dozes from 3600 (an hour without a launch); windows
    /// every hour. A push at 3000 is delivered at once; one at 9000 at the 10800 window. Charging,
    /// or a backend that does not hear of every app (no last launch), expects no doze.
    @Test func fcmExpectsAPushSentWhileTheDeviceDozesAtTheNextWindow() {
        let view = Self.view(lastLaunch: 0)
        #expect(Self.pushes([(1, 3000)], .fcm, view: view) == [[0, 3000, 3000]])
        #expect(Self.pushes([(1, 9000)], .fcm, view: view) == [[0, 9000, 10_800]])
        #expect(Self.pushes([(1, 9000)], .fcm, view: Self.view(lastLaunch: 0, charging: true)) == [[0, 9000, 9000]])
        #expect(Self.pushes([(1, 9000)], .fcm, view: Self.view()) == [[0, 9000, 9000]])
    }

    /// Two pushes of one app before the same window: the second would collapse the first while
    /// it is held, so only the second is sent. Another app's push is kept.
    @Test func fcmNeverSendsAPushItsNextPushWouldCollapse() {
        let view = Self.view(lastLaunch: 0)
        #expect(Self.pushes([(1, 7300), (2, 7400), (1, 9000)], .fcm, view: view) == [[1, 7400, 10_800], [2, 9000, 10_800]])
    }

    /// What is left of this clock hour: APNs from 0, a push delivered at 100 leaves one more
    /// (at 1900); an app whose only push is after the hour has the hour's two (0 and 1800).
    @Test func pushesLeftThisHourCountsTheBucketAfterThePlan() {
        let left = PushTiming.pushesLeftThisHour(
            deliveries: [(1, 100), (2, 4000)], from: 0, delivery: DeliveryOptions(kind: .apns), device: Self.view())
        #expect(left == [1: 1, 2: 2])
        let afterLast = PushTiming.pushesLeftThisHour(
            deliveries: [(1, 3000)], from: 2000, delivery: DeliveryOptions(kind: .apns), device: Self.view(lastFetch: [1: 1500]))
        #expect(afterLast == [1: 0])
    }
}
