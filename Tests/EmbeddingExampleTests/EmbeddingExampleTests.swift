import FetchCastTestSupport
@testable import EmbeddingExample
import FetchCastModel
import Foundation
import Testing

/// The embedding example (Examples/EmbeddingExample): its scheduler called directly, and the
/// built binary run as a user runs it (`swift run EmbeddingExample`).
struct EmbeddingExampleTests {
    /// A scheduler that has recorded the simulated week.
    static func afterTheWeek() -> FetchScheduler {
        var scheduler = FetchScheduler()
        scheduler.timeZone = SimulatedWeek.timeZone
        for event in SimulatedWeek.events() {
            if let result = event.result {
                scheduler.recordFetch(of: event.app, at: event.date, result: result)
            } else {
                scheduler.recordLaunch(of: event.app, at: event.date)
            }
        }
        return scheduler
    }

    @Test func thePlanIsAheadOfNowAndGivesEachAppItsFirstFetch() throws {
        let scheduler = Self.afterTheWeek()
        let now = SimulatedWeek.now
        let plan = scheduler.plan(at: now)
        #expect(!plan.isEmpty)
        #expect(plan.allSatisfy { $0.time >= now.timeIntervalSince1970 && $0.time < now.timeIntervalSince1970 + 86_400 })
        // Every weekday the podcast is opened minutes after the news: it is fetched at once.
        let podcasts = try #require(scheduler.earliestBeginDate(for: "com.example.podcasts", now: now))
        #expect(podcasts == now, "podcasts at \(podcasts)")
        for app in FetchScheduler.appNames {
            let first = plan.first { $0.app == FetchScheduler.id(of: app) }
            #expect(scheduler.earliestBeginDate(for: app, now: now) == first.map { Date(timeIntervalSince1970: $0.time) })
        }
        #expect(scheduler.earliestBeginDate(for: "com.example.unknown", now: now) == nil)
        // Told of its own apps only, it cannot tell the device's silences: no look before a pickup.
        #expect(!plan.contains { if case .pickup = $0.reason { true } else { false } }, "\(plan.map(\.reason))")
    }

    @Test func aRestoredSchedulerPlansTheSame() throws {
        let scheduler = Self.afterTheWeek()
        let bytes = try scheduler.savedState()
        let restored = FetchScheduler(restoring: bytes)
        #expect(restored.model.eventCount == SimulatedWeek.events().count)
        #expect(try restored.savedState() == bytes)
        let plan = scheduler.plan(at: SimulatedWeek.now)
        #expect(!plan.isEmpty)
        #expect(restored.plan(at: SimulatedWeek.now) == plan)
    }

    @Test func damagedStateStartsOver() throws {
        var bytes = try Self.afterTheWeek().savedState()
        bytes[0] ^= 0xFF
        #expect(FetchScheduler(restoring: bytes).model.eventCount == 0)
        #expect(FetchScheduler(restoring: nil).model.eventCount == 0)
    }

    /// The other way to embed (docs/model.md): an OS, launcher or SDK that sees every launch
    /// runs ``LearnedPolicy`` live, with the calls the page shows.
    @Test func theLivePolicyFetchesAheadOfLaunchesThroughTheDocumentedCalls() throws {
        let apps = FetchScheduler.appNames.indices.map { Int32($0) }
        var policy = LearnedPolicy(apps: apps, model: DeviceModel(), configuration: SchedulerConfiguration(budget: 24), prior: .none)
        var fetched: [(app: Int32, time: Double)] = []
        var launches: [(app: Int32, time: Double)] = []
        for event in SimulatedWeek.events() where event.result == nil {
            let time = event.date.timeIntervalSince1970
            // A timer armed for `nextWakeup` fires before this launch.
            while let wakeup = policy.nextWakeup, wakeup <= time {
                var fetches: [PlannedFetch] = []
                policy.wake(at: wakeup, into: &fetches)
                for fetch in fetches {
                    fetched.append((fetch.app, wakeup))
                    policy.didFetch(app: fetch.app, at: wakeup, result: .newData)
                }
            }
            let app = try #require(FetchScheduler.id(of: event.app))
            launches.append((app, time))
            policy.observe(DeviceEvent(time: time, utcOffsetSeconds: 3600, app: app, kind: .launch))
        }
        #expect(!fetched.isEmpty)
        #expect(fetched.allSatisfy { apps.contains($0.app) })
        // At most 24 a local day (UTC+01:00).
        let perDay = Dictionary(grouping: fetched) { Int(($0.time + 3600) / 86_400) }
        #expect(perDay.values.allSatisfy { $0.count <= 24 })
        // Some launches found their app fetched within the 30 minutes before.
        let fresh = launches.filter { launch in
            fetched.contains { $0.app == launch.app && $0.time < launch.time && launch.time - $0.time <= 1800 }
        }
        #expect(!fresh.isEmpty)
        let restored = try DeviceModel(binary: policy.model.binaryEncoded())
        #expect(restored.eventCount == policy.model.eventCount)
    }

    @Test func theBuiltExamplePrintsFutureDatesAndAnIdenticalRestoredPlan() throws {
        let process = Process()
        let executable = try #require(Self.executable(), "EmbeddingExample not built next to the test bundle")
        process.executableURL = executable
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stdout = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(stderr)")
        #expect(stderr.isEmpty)
        let lines = stdout.split(separator: "\n").map(String.init)
        let iso = ISO8601DateFormatter()
        let now = try #require(lines.first { $0.hasPrefix("now: ") }.flatMap { iso.date(from: String($0.dropFirst(5))) })
        #expect(now == SimulatedWeek.now)
        // "  com.example.news       2026-11-23T07:05:00+01:00  (in 65 min)"
        let dates = lines.compactMap { line -> Date? in
            let fields = line.split(separator: " ")
            guard fields.count == 5, fields[0].hasPrefix("com.example."), fields[2] == "(in" else { return nil }
            return iso.date(from: String(fields[1]))
        }
        #expect(!dates.isEmpty, "\(stdout)")
        #expect(dates.allSatisfy { $0 >= now }, "\(stdout)")
        let planned = try #require(lines.first { $0.hasPrefix("plan for the next 24 h (") })
        let restored = try #require(lines.first { $0.hasPrefix("restored model plans the same ") })
        let count = Self.afterTheWeek().plan(at: SimulatedWeek.now).count
        #expect(count > 0)
        #expect(planned == "plan for the next 24 h (\(count) fetches):")
        #expect(restored == "restored model plans the same \(count) fetches: yes")
    }

    /// The `EmbeddingExample` binary SwiftPM built next to this test bundle (the test target
    /// depends on it).
    static func executable() -> URL? { BuiltExecutable.url(named: "EmbeddingExample") }
}
