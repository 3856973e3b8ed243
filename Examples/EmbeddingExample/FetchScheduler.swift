import FetchCastCore
import FetchCastModel
import Foundation

/// What an app or an SDK keeps to schedule its background fetches with FetchCast: the learned
/// model of this device, the table of app ids, and the calls it makes.
///
/// - On every launch (`sceneDidBecomeActive`, `onResume`): ``recordLaunch(of:at:)``.
/// - When a background fetch finishes: ``recordFetch(of:at:result:)`` with what it found.
/// - Then, to schedule the next one: ``earliestBeginDate(for:now:)`` is the date to put in
///   `BGAppRefreshTaskRequest.earliestBeginDate` (iOS runs the task at that date or later).
/// - Before the app is suspended: ``savedState()``, kept in a file or in `UserDefaults`;
///   ``init(restoring:)`` on the next start.
///
/// It uses only `FetchCastCore` and `FetchCastModel`: no SQLite, no files of its own, no clock
/// (every call takes the time), so it runs the same in an app, a test or a backend.
struct FetchScheduler {
    /// App name ↔ dense `Int32` id. The model refers to apps by id only, so this table must stay
    /// the same across runs: append new apps at the end, never reorder or reuse an id.
    static let appNames = ["com.example.news", "com.example.mail", "com.example.podcasts"]

    /// The id of an app name (`nil` for an app the table does not know).
    static func id(of name: String) -> Int32? {
        appNames.firstIndex(of: name).map { Int32($0) }
    }

    /// The name of an app id.
    static func name(of id: Int32) -> String {
        appNames.indices.contains(Int(id)) ? appNames[Int(id)] : "app \(id)"
    }

    /// FetchCast's scheduler, following this device's launches and fetches: at most 24
    /// background fetches a local day, none of one app within 15 min (iOS's minimum).
    private(set) var scheduler: LearnedPolicy
    /// The device's time zone: hours of the week are learned in local time.
    var timeZone = TimeZone.current

    /// What FetchCast has learned about this device.
    var model: DeviceModel { scheduler.model }

    /// A scheduler that knows nothing yet, or the one saved by ``savedState()``.
    ///
    /// State that cannot be read (damaged, or written by an incompatible version of FetchCast)
    /// is dropped: the scheduler starts over and learns again from the next launches.
    init(restoring state: [UInt8]? = nil) {
        scheduler = state.flatMap { try? LearnedPolicy(restoring: $0) } ?? LearnedPolicy(
            apps: Self.appNames.indices.map { Int32($0) }, model: DeviceModel(), configuration: Self.configuration,
            prior: .none, mode: .following)
    }

    /// At most 24 fetches a local day. It is told of its own apps' launches only, not of the
    /// device's, so it cannot tell when the phone is first used after a silence: it makes no
    /// look before such a pickup (a pause of its apps is not the device's silence).
    static var configuration: SchedulerConfiguration {
        var configuration = SchedulerConfiguration(budget: 24)
        configuration.looksBeforePickups = false
        return configuration
    }

    /// Records that the user opened `app` at `date`.
    mutating func recordLaunch(of app: String, at date: Date) {
        record(app, at: date, kind: .launch, result: nil)
    }

    /// Records what a background fetch of `app` that ran at `date` found: `.newData`, `.noData`
    /// or `.failed` (the `UIBackgroundFetchResult` of the fetch).
    mutating func recordFetch(of app: String, at date: Date, result: FetchResult) {
        record(app, at: date, kind: .fetch, result: result)
    }

    private mutating func record(_ app: String, at date: Date, kind: EventKind, result: FetchResult?) {
        guard let id = Self.id(of: app) else { return }
        scheduler.observe(DeviceEvent(
            time: date.timeIntervalSince1970, utcOffsetSeconds: Int32(timeZone.secondsFromGMT(for: date)),
            app: id, kind: kind, result: result))
    }

    /// The fetches worth making in the next 24 hours, in time order: what `fetchcast predict`
    /// answers for this device.
    func plan(at now: Date) -> [ScheduledFetch] {
        scheduler.plan(from: now.timeIntervalSince1970)
    }

    /// When `app` should next fetch: its first planned fetch, or `nil` when no fetch of it is
    /// worth making in the next 24 hours (then ask again at the next launch).
    func earliestBeginDate(for app: String, now: Date) -> Date? {
        guard let id = Self.id(of: app) else { return nil }
        return plan(at: now).first { $0.app == id }.map { Date(timeIntervalSince1970: $0.time) }
    }

    /// The learned state as bytes, to keep until the next start.
    func savedState() throws -> [UInt8] {
        try scheduler.savedState()
    }
}
