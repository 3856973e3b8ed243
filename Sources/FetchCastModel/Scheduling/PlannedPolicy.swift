import FetchCastCore
import Foundation

/// A client of the scheduler's plans as a causal ``FetchPolicy``: every `replanInterval` (and,
/// when `replanOnEvent`, one second after each event it sees) it asks for the plan from exactly
/// the events before that moment — the call `fetchcast predict --at T` makes — and fetches at
/// the planned times until it asks again.
///
/// It is what an app's backend, a push scheduler or an app scheduling its own
/// `BGAppRefreshTask` does with FetchCast's answers, so replaying it (`fetchcast evaluate
/// --policies planned`) measures the plans users receive. Asking after every event it sees
/// (its own fetches' results included), it fetches exactly what the live policy (`learned`)
/// would: a plan is what the live scheduler would do if no further event came. The plans come from a following
/// ``LearnedPolicy`` told of every event it sees and of its own fetches' results (a client
/// reports them, and `predict` would see them in the store as fetch events):
/// ``LearnedPolicy/plan(from:horizon:notBefore:count:)``.
package struct PlannedPolicy: FetchPolicy, Sendable {
    /// The scheduler the plans come from, following the device's events.
    package private(set) var scheduler: LearnedPolicy
    /// Seconds between two plans.
    package let replanInterval: Double
    /// Whether it also asks for a plan one second after each event it sees.
    package let replanOnEvent: Bool
    /// The push service its backend sends through, when it sends the pushes ``PushTiming``
    /// says (each at its `send_at`, leaving out what the service would hold); `nil`: each fetch
    /// is due at its planned time.
    package let delivery: DeliveryOptions?
    /// Whether its scheduler is told of every app's events (visibility `device`): only then
    /// can it tell when the device dozes (``PushTiming/DeviceView/lastLaunch``).
    package let seesDevice: Bool
    /// The plan being followed, each fetch due when it is to be sent (under ``delivery``: the
    /// fetches sent, each at its `send_at`).
    var plan: [ScheduledFetch] = []
    var next = 0
    var nextReplan: Double?
    var made: [MadePlan] = []
    var reporting = false

    /// Creates a policy.
    /// - Parameters:
    ///   - apps: The apps to plan for.
    ///   - model: A model to start from (learned state), or a fresh one.
    ///   - configuration: Budget, minimum interval and the other constants.
    ///   - prior: What other devices say.
    ///   - replanInterval: Seconds between two plans (a push scheduler's sweep: 3600).
    ///   - replanOnEvent: Also ask one second after each event seen (a backend that hears of
    ///     every launch as it happens).
    ///   - delivery: The push service its backend sends through, to send each fetch when
    ///     ``PushTiming`` says (`predict --delivery`'s `send_at`); `nil` or `direct`: at its time.
    ///   - seesDevice: Whether `apps` are all the device's apps (it can then tell when the
    ///     device dozes, and when it is first used after a silence: without it the scheduler
    ///     does not look before pickups, ``SchedulerConfiguration/looksBeforePickups``).
    package init(
        apps: [Int32], model: DeviceModel, configuration: SchedulerConfiguration, prior: DevicePrior,
        replanInterval: Double = 3600, replanOnEvent: Bool = false, delivery: DeliveryOptions? = nil, seesDevice: Bool = true
    ) {
        precondition(replanInterval > 0, "replanInterval must be positive")
        // Only a scheduler told of every app's launches knows when the device is silent.
        var configuration = configuration
        if !seesDevice { configuration.looksBeforePickups = false }
        scheduler = LearnedPolicy(apps: apps, model: model, configuration: configuration, prior: prior, mode: .following)
        self.replanInterval = replanInterval
        self.replanOnEvent = replanOnEvent
        self.delivery = delivery.flatMap { $0.isPush ? $0 : nil }
        self.seesDevice = seesDevice
    }

    /// Creates a policy for a replay from a ``DeviceContext`` (the model's τ is the context's,
    /// as for ``LearnedPolicy``).
    package init(
        context: DeviceContext, replanInterval: Double = 3600, replanOnEvent: Bool = false,
        model: ModelConfiguration = ModelConfiguration(), prior: DevicePrior = .none, delivery: DeliveryOptions? = nil,
        seesDevice: Bool = true
    ) {
        var scheduler = SchedulerConfiguration(budget: context.budget)
        scheduler.minimumInterval = min(scheduler.minimumInterval, context.tau)
        scheduler.constraints = context.schedulerConstraints
        var modelConfiguration = model
        modelConfiguration.tau = context.tau
        self.init(apps: context.apps, model: DeviceModel(configuration: modelConfiguration), configuration: scheduler,
                  prior: prior, replanInterval: replanInterval, replanOnEvent: replanOnEvent, delivery: delivery,
                  seesDevice: seesDevice)
    }

    /// What the model has learned so far.
    package var model: DeviceModel { scheduler.model }
    /// The apps it plans for.
    package var apps: [Int32] { scheduler.apps }

    package var nextWakeup: Double? {
        let due = next < plan.count ? plan[next].time : nil
        switch (due, nextReplan) {
        case (let a?, let b?): return min(a, b)
        case (let a?, nil): return a
        case (nil, let b): return b
        }
    }

    package mutating func observe(_ event: DeviceEvent) {
        scheduler.observe(event)
        // After a launch or a fetch, one second later (when the live policy looks); a publish
        // counts from its instant on (a look then sees it), so the plan is asked for then.
        ask(at: event.time + (event.kind == .publish ? 0 : DeviceModel.triggerDelay))
    }

    /// Schedules the next plan at `asking` (the first plan always; later ones when it replans on
    /// events).
    private mutating func ask(at asking: Double) {
        if let r = nextReplan {
            if replanOnEvent, asking < r { nextReplan = asking }
        } else {
            // The first plan: one second after the first event, when there is something to plan from.
            nextReplan = asking
        }
    }

    package mutating func observeConditions(_ conditions: DeviceConditions, at time: Double, utcOffsetSeconds: Int32) {
        scheduler.observeConditions(conditions, at: time, utcOffsetSeconds: utcOffsetSeconds)
        // A `state` row is an event it sees too, in effect from its instant (a look then sees
        // it); it is no reason for a first plan.
        if nextReplan != nil { ask(at: time) }
    }

    package mutating func didFetch(app: Int32, at time: Double, result: FetchResult) {
        scheduler.didFetch(app: app, at: time, result: result)
        // Its own fetch's result is an event it sees too (an app schedules its next task when
        // one ends; a backend hears of the fetch).
        if replanOnEvent { ask(at: time + DeviceModel.triggerDelay) }
    }

    package mutating func wake(at t: Double, into fetches: inout [PlannedFetch]) {
        if let r = nextReplan, r <= t { replan(at: t) }
        while next < plan.count, plan[next].time <= t {
            fetches.append(PlannedFetch(app: plan[next].app, reason: plan[next].reason))
            next += 1
        }
    }

    /// Asks for the plan at `t`, as `fetchcast predict --at t` does.
    mutating func replan(at t: Double) {
        let fresh = scheduler.plan(from: t)
        if let delivery {
            plan = PushTiming.pushes(for: fresh, from: t, delivery: delivery, device: scheduler.pushView(seesDevice: seesDevice)).map {
                var due = fresh[$0.index]
                due.time = $0.sendAt
                return due
            }
        } else {
            plan = fresh
        }
        next = 0
        nextReplan = t + replanInterval
        if reporting { made.append(MadePlan(time: t, fetches: fresh)) }
    }

    package mutating func reportPlans(_ on: Bool) { reporting = on }

    package mutating func drainPlans(into plans: inout [MadePlan]) {
        plans.append(contentsOf: made)
        made.removeAll(keepingCapacity: true)
    }
}
