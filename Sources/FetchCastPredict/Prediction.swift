import FetchCastCore
import FetchCastModel
import FetchCastTrace

/// One predicted fetch, as `fetchcast predict` prints it.
public struct Prediction: Sendable, Hashable, Codable {
    /// Record schema version.
    public var schema = 1
    /// The device.
    public var device: String
    /// The app.
    public var app: String
    /// When to fetch: ISO 8601 in the device's local offset, not before `--at`.
    public var fetchAt: String
    /// Unix seconds of `fetch_at`.
    public var fetchAtUnix: Double
    /// P(a session — a launch after more than τ without one — of the app starts within τ after `fetch_at`).
    public var launchProbability: Double
    /// P(the fetch finds new data).
    public var newDataProbability: Double
    /// Why, in words.
    public var reason: String
    /// With a push service (``PredictionRequest/delivery``): when to send the silent push so
    /// that it is delivered by `fetch_at` (``PushTiming``), ISO 8601 in the device's offset.
    public var sendAt: String?
    /// Unix seconds of `send_at`.
    public var sendAtUnix: Double?
    /// With a push service: how many more pushes of this app the throttle lets through before
    /// the end of the plan start's clock hour (UTC), after the plan's own pushes in that hour.
    public var pushesLeftThisHour: Int?

    enum CodingKeys: String, CodingKey {
        case schema, device, app, reason
        case sendAt = "send_at"
        case sendAtUnix = "send_at_unix"
        case pushesLeftThisHour = "pushes_left_this_hour"
        case fetchAt = "fetch_at"
        case fetchAtUnix = "fetch_at_unix"
        case launchProbability = "launch_probability"
        case newDataProbability = "new_data_probability"
    }
}

/// What `fetchcast predict` asks.
public struct PredictionRequest: Sendable, Hashable {
    /// Only this device (by name); every device when `nil`.
    public var device: String?
    /// Only this app (by name); otherwise the device's top apps by sessions.
    public var app: String?
    /// Only these apps (by name), planned together (one daily cap); with ``app``, that one too.
    public var apps: [String] = []
    /// Plan from this instant (Unix seconds), from the events before it (a time inside the
    /// history refolds the device's events before it); default: each device's last event.
    public var at: Double?
    /// No fetch before this instant (Unix seconds), like `earliestBeginDate`; the plan then covers
    /// the 24 hours from it.
    public var notBefore: Double?
    /// How many fetches per device.
    public var count: Int = 10
    /// How far ahead to plan, seconds from the plan's start (or from `notBefore` when later).
    public var horizon: Double = 86_400
    /// Fetches per device per day.
    public var budget: Double = 24
    /// How many top apps per device when no app is named.
    public var topApps: Int = 5
    /// Per-app constraints and system rules: the scheduler keeps to them as the condition-aware
    /// `learned` policy of `evaluate --constraints` does (``SchedulerConfiguration/constraints``),
    /// told of the device's events under them, and plans no fetch they refuse under the
    /// conditions at the plan's start (unknown without `state` rows).
    public var constraints = FetchConstraints.none
    /// The push service a backend sends the plan through: each fetch then comes with its
    /// `send_at` and the app's pushes left this hour, and a fetch the service could not deliver
    /// by its time (the throttle would hold it) or that the app's next push would collapse is
    /// left out (``PushTiming``: what `evaluate --delivery` replays `planned` sending).
    /// `nil` or `direct`: the plan as it is.
    public var delivery: DeliveryOptions?

    /// Creates a request.
    public init(
        device: String? = nil, app: String? = nil, at: Double? = nil, notBefore: Double? = nil, count: Int = 10,
        budget: Double = 24, topApps: Int = 5
    ) {
        self.device = device
        self.app = app
        self.at = at
        self.notBefore = notBefore
        self.count = count
        self.budget = budget
        self.topApps = topApps
    }
}

/// Why `predict` could not answer.
public struct PredictionError: Error, CustomStringConvertible, Sendable {
    public var description: String
}

/// Answers "when should device D fetch for app A next?" from the store.
public enum Predictor {
    /// Plans the next fetches for the requested devices and apps.
    public static func predict(_ request: PredictionRequest, snapshot: ModelRepository.Snapshot) async throws -> [Prediction] {
        var devices: [Int64]
        if let name = request.device {
            // A name whose events were all forgotten is no device, as `model` and `export` say.
            guard let id = snapshot.device(named: name), snapshot.models[id] != nil else {
                throw PredictionError(description: "no device '\(name)' in the store\(snapshot.didYouMean(device: name)); see `fetchcast devices` (device ids are case-sensitive)")
            }
            devices = [id]
        } else {
            devices = snapshot.models.keys.sorted { ModelRepository.precedes(snapshot.deviceNames[$0] ?? "", snapshot.deviceNames[$1] ?? "") }
        }
        var appFilter: [Int32] = []
        for name in (request.app.map { [$0] } ?? []) + request.apps {
            guard let id = snapshot.app(named: name) else {
                throw PredictionError(description: "no app '\(name)' in the store\(snapshot.didYouMean(app: name)); app ids are case-sensitive")
            }
            let app = Int32(truncatingIfNeeded: id)
            if !appFilter.contains(app) { appFilter.append(app) }
        }
        var out: [Prediction] = []
        for device in devices {
            try WorkDeadline.checkCurrent()
            guard var model = snapshot.models[device], let last = model.lastEventTime else { continue }
            if let at = request.at { model = try await snapshot.model(of: device, before: at) ?? model }
            guard model.lastEventTime != nil else { continue }
            let apps = appFilter.isEmpty ? model.appsBySessions(limit: request.topApps) : appFilter
            // Without `at`, the plan starts at the device's last event and knows it (a launch
            // then is reacted to); with `at`, it knows exactly the events before `at`.
            let start = request.at ?? last
            let notBefore = max(start, request.notBefore ?? start)
            var configuration = SchedulerConfiguration(budget: request.budget)
            configuration.constraints = request.constraints.resolved(apps: apps) { snapshot.appNames[Int64($0)] ?? "" }
            // Long after the device's last event nothing is pending: an empty plan, without
            // reading the device's history.
            if let quiet = LearnedPolicy.pendingLooksEnd(configuration: configuration, tau: model.configuration.tau),
               let seen = model.lastEventTime, start > seen + quiet
            { continue }
            guard let scheduler = try await snapshot.scheduler(
                of: device, apps: apps, configuration: configuration, model: model.configuration,
                before: start, inclusive: request.at == nil)
            else { continue }
            out += predictions(
                of: device, scheduler: scheduler, from: start, notBefore: notBefore, count: request.count, horizon: request.horizon,
                delivery: request.delivery, snapshot: snapshot)
        }
        return out
    }
}

extension Predictor {
    /// The plan of `device` from `start` as records: ``LearnedPolicy/plan(from:horizon:notBefore:count:)``
    /// of its caught-up scheduler, each fetch with its reason in words (from the scheduler's
    /// model, as of the events it was told of; `caughtUp`: the scheduler as of the device's last
    /// event, when `scheduler` was stepped through looks since). What ``predict(_:snapshot:)``
    /// answers per device, and what a ``PlanTable`` keeps ahead.
    static func predictions(
        of device: Int64, scheduler: LearnedPolicy, from start: Double, notBefore: Double, count: Int,
        horizon: Double = PlanTable.horizon, reasonsFrom caughtUp: LearnedPolicy? = nil, delivery: DeliveryOptions? = nil,
        snapshot: ModelRepository.Snapshot
    ) -> [Prediction] {
        let model = scheduler.model
        // What the reasons say of the conditions is what the scheduler knew at the device's last
        // event (a look since moves the conditions' clock, not what they say).
        let habits = (caughtUp ?? scheduler).conditionHabits
        // Through a push service: the fetches it sends, in the plan's order, with when to send
        // them and the pushes left this hour per app; the fetches it leaves out are not listed.
        // Which it leaves out depends on the fetches after them (a later push may collapse an
        // earlier one), so the whole plan is weighed, as the replay's `planned` does, then cut.
        let pushed = delivery?.isPush ?? false
        var plan = scheduler.plan(from: start, horizon: horizon, notBefore: notBefore, count: pushed ? .max : count)
        var sends: [PushTiming.Push]?
        var left: [Int32: Int] = [:]
        if let delivery, pushed {
            let view = scheduler.pushView(seesDevice: true)
            let pushes = PushTiming.pushes(for: plan, from: start, delivery: delivery, device: view).sorted { $0.index < $1.index }
            left = PushTiming.pushesLeftThisHour(
                deliveries: pushes.map { (plan[$0.index].app, $0.deliveredAt) }, from: start, delivery: delivery, device: view)
            plan = pushes.map { plan[$0.index] }
            sends = pushes
        }
        let deviceName = snapshot.deviceNames[device] ?? String(device)
        var out: [Prediction] = []
        var ownSessions: [Int32: Double] = [:]  // per app, not per fetch: O(168) each
        let lent = snapshot.prior(for: device).lendsOtherDevicesTimes
        for (i, fetch) in plan.prefix(count).enumerated() {
            let own = ownSessions[fetch.app] ?? Explanation.ownSessions(app: fetch.app, model: model, now: model.lastEventTime ?? fetch.time)
            ownSessions[fetch.app] = own
            let appName = snapshot.appNames[Int64(fetch.app)] ?? String(fetch.app)
            out.append(Prediction(
                device: deviceName, app: appName,
                fetchAt: Timestamp.format(micros: Int64(fetch.time * 1_000_000), utcOffsetSeconds: model.lastOffset),
                fetchAtUnix: fetch.time, launchProbability: fetch.launchProbability,
                newDataProbability: fetch.newDataProbability,
                reason: Explanation.reason(for: fetch, device: deviceName, model: model,
                                           tau: model.configuration.tau, ownSessions: own, habits: habits, lentByOthers: lent,
                                           name: { snapshot.appNames[Int64($0)] ?? String($0) })))
            if let send = sends?[i] {
                out[out.count - 1].sendAt = Timestamp.format(micros: Int64(send.sendAt * 1_000_000), utcOffsetSeconds: model.lastOffset)
                out[out.count - 1].sendAtUnix = send.sendAt
                out[out.count - 1].pushesLeftThisHour = left[fetch.app] ?? 0
            }
        }
        return out
    }

    /// Catches up, and saves when the repository saves schedulers, the scheduler that a plan of
    /// `device` with `request`'s apps and budget starts from, as of the device's last event:
    /// what `predict --device D` reads, and what a later plan (`serve`'s, from the clock) goes
    /// on from instead of replaying the device's history.
    /// - Returns: That scheduler and the device's last event (`nil` for a device without events:
    ///   there is nothing to keep).
    static func catchUp(_ device: Int64, request: PredictionRequest, snapshot: ModelRepository.Snapshot) async throws
        -> (scheduler: LearnedPolicy, last: Double)?
    {
        // Through the latest publish it has seen too: a plan from after it knows of it.
        guard let model = snapshot.models[device], model.lastEventTime != nil, let last = model.lastObservedTime else { return nil }
        let apps = model.appsBySessions(limit: request.topApps)
        return try await snapshot.scheduler(
            of: device, apps: apps, configuration: SchedulerConfiguration(budget: request.budget), model: model.configuration,
            before: last, inclusive: true
        ).map { ($0, last) }
    }
}
