// What an app or SDK writes to schedule background fetches with FetchCast (docs/model.md,
// "Embedding the scheduler in an app"). Run it with `swift run EmbeddingExample`.
import FetchCastModel
import Foundation

// 1. The first start: nothing saved yet. (In an app the time zone is TimeZone.current, the
//    default; the simulated phone is at UTC+01:00.)
var scheduler = FetchScheduler(restoring: nil)
scheduler.timeZone = SimulatedWeek.timeZone

// 2. Three weeks of use: the app records every launch and every background fetch's result.
let week = SimulatedWeek.events()
for event in week {
    if let result = event.result {
        scheduler.recordFetch(of: event.app, at: event.date, result: result)
    } else {
        scheduler.recordLaunch(of: event.app, at: event.date)
    }
}
let launches = week.filter { $0.result == nil }.count
print("learned from \(SimulatedWeek.weeks) weeks: \(launches) launches, \(week.count - launches) fetch results")

// 3. Monday morning: the plan for the next 24 hours, and the date each app puts in
//    BGAppRefreshTaskRequest.earliestBeginDate.
let now = SimulatedWeek.now
func formatter(_ format: String) -> DateFormatter {
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = SimulatedWeek.timeZone
    formatter.dateFormat = format
    return formatter
}
let iso = formatter("yyyy-MM-dd'T'HH:mm:ssxxx"), clock = formatter("HH:mm")
func padded(_ text: String) -> String { text.padding(toLength: 21, withPad: " ", startingAt: 0) }

print("now: \(iso.string(from: now))")
let plan = scheduler.plan(at: now)
print("plan for the next 24 h (\(plan.count) fetches):")
for fetch in plan.prefix(8) {
    let p = String(format: "p_launch %.2f  p_new %.2f", fetch.launchProbability, fetch.newDataProbability)
    print("  \(clock.string(from: Date(timeIntervalSince1970: fetch.time)))  \(padded(FetchScheduler.name(of: fetch.app)))  \(p)  \(fetch.reason.describe(FetchScheduler.name(of:)))")
}
if plan.count > 8 { print("  … \(plan.count - 8) more") }
print("BGAppRefreshTaskRequest.earliestBeginDate:")
for app in FetchScheduler.appNames {
    if let date = scheduler.earliestBeginDate(for: app, now: now) {
        let minutes = Int((date.timeIntervalSince(now) / 60).rounded())
        print("  \(padded(app))  \(iso.string(from: date))  (in \(minutes) min)")
    } else {
        print("  \(padded(app))  none worth it in the next 24 h: ask again at the next launch")
    }
}

// 4. Before the app is suspended: save the state (a file here; UserDefaults or an App Group
//    container work the same way: `UserDefaults.standard.set(Data(bytes), forKey: "fetchcast")`).
let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fetchcast-example-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: directory) }
let file = directory.appendingPathComponent("model.fetchcast")
let bytes = try scheduler.savedState()
try Data(bytes).write(to: file, options: .atomic)
print("saved the model: \(bytes.count) bytes")

// 5. The next start: restore the state. It plans exactly what the saved model planned.
let restored = FetchScheduler(restoring: [UInt8](try Data(contentsOf: file)))
let same = restored.plan(at: now) == plan
print("restored model plans the same \(plan.count) fetches: \(same ? "yes" : "NO")")
if !same { exit(1) }
