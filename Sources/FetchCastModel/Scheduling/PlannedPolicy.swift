import FetchCastCore
import Foundation

/// A client of the planner as a causal ``FetchPolicy``: every `replanInterval` (and, when
/// `replanOnEvent`, one second after each event it sees) it asks ``FetchPlanner`` for a plan
/// from exactly the events before that moment — the call `fetchcast predict --at T` makes — and
/// fetches at the planned times until it asks again.
///
/// It is what an app's backend, a push scheduler or an app scheduling its own
/// `BGAppRefreshTask` does with FetchCast's answers, so replaying it (`fetchcast evaluate
/// --policies planned`) measures the plans users receive. Its own fetches' results are learned
/// like fetch events in a trace: a client reports them, and `predict` would see them in the
/// store.
package struct PlannedPolicy: FetchPolicy, Sendable {
    /// What the model has learned so far.
    package private(set) var model: DeviceModel
    /// The apps it plans for.
    package let apps: [Int32]
    let configuration: SchedulerConfiguration
    let prior: DevicePrior
    /// Seconds between two plans.
    package let replanInterval: Double
    /// Whether it also asks for a plan one second after each event it sees.
    package let replanOnEvent: Bool
    var plan: [ScheduledFetch] = []
    var next = 0
    var nextReplan: Double?
    var made: [MadePlan] = []
    var reporting = false
    /// The device's conditions once a `state` row said anything, and its habits so far (as
    /// `fetchcast predict` reads them from the store's `state` rows before the plan's start).
    var conditions: DeviceConditions?
    var habits = ConditionHabits()

    /// Creates a policy.
    /// - Parameters:
    ///   - apps: The apps to plan for.
    ///   - model: A model to start from (learned state), or a fresh one.
    ///   - configuration: Budget, minimum interval and the other constants.
    ///   - prior: What other devices say.
    ///   - replanInterval: Seconds between two plans (a push scheduler's sweep: 3600).
    ///   - replanOnEvent: Also ask one second after each event seen (a backend that hears of
    ///     every launch as it happens).
    package init(
        apps: [Int32], model: DeviceModel, configuration: SchedulerConfiguration, prior: DevicePrior,
        replanInterval: Double = 3600, replanOnEvent: Bool = false
    ) {
        precondition(replanInterval > 0, "replanInterval must be positive")
        self.apps = apps
        self.model = model
        self.configuration = configuration
        self.prior = prior
        self.replanInterval = replanInterval
        self.replanOnEvent = replanOnEvent
    }

    /// Creates a policy for a replay from a ``DeviceContext`` (the model's τ is the context's,
    /// as for ``LearnedPolicy``).
    package init(
        context: DeviceContext, replanInterval: Double = 3600, replanOnEvent: Bool = false,
        model: ModelConfiguration = ModelConfiguration(), prior: DevicePrior = .none
    ) {
        var scheduler = SchedulerConfiguration(budget: context.budget)
        scheduler.minimumInterval = min(scheduler.minimumInterval, context.tau)
        var modelConfiguration = model
        modelConfiguration.tau = context.tau
        self.init(apps: context.apps, model: DeviceModel(configuration: modelConfiguration), configuration: scheduler,
                  prior: prior, replanInterval: replanInterval, replanOnEvent: replanOnEvent)
    }

    /// The plan being followed: the fetches not made yet, in time order.
    package var remainingPlan: ArraySlice<ScheduledFetch> { plan[next...] }

    package var nextWakeup: Double? {
        let due = next < plan.count ? plan[next].time : nil
        switch (due, nextReplan) {
        case (let a?, let b?): return min(a, b)
        case (let a?, nil): return a
        case (nil, let b): return b
        }
    }

    package mutating func observe(_ event: DeviceEvent) {
        model.observe(event)
        let asking = event.time + DeviceModel.triggerDelay
        if let r = nextReplan {
            if replanOnEvent, asking < r { nextReplan = asking }
        } else {
            // The first plan: one second after the first event, when there is something to plan from.
            nextReplan = asking
        }
    }

    package mutating func observeConditions(_ conditions: DeviceConditions, at time: Double, utcOffsetSeconds: Int32) {
        guard configuration.conditionAware else { return }
        self.conditions = conditions
        habits.observe(conditions, at: time, utcOffsetSeconds: utcOffsetSeconds)
    }

    package mutating func didFetch(app: Int32, at time: Double, result: FetchResult) {
        model.observe(DeviceEvent(time: time, utcOffsetSeconds: model.lastOffset, app: app, kind: .fetch, result: result))
    }

    package mutating func wake(at t: Double, into fetches: inout [PlannedFetch]) {
        if let r = nextReplan, r <= t { replan(at: t) }
        while next < plan.count, plan[next].time <= t {
            fetches.append(PlannedFetch(app: plan[next].app, reason: plan[next].reason))
            next += 1
        }
    }

    /// Asks the planner for the plan at `t`, as `fetchcast predict --at t` does.
    mutating func replan(at t: Double) {
        let known = conditions.map { PlanConditions(current: $0, habits: habits.through(t)) }
        plan = FetchPlanner.plan(model: model, apps: apps, from: t, configuration: configuration, prior: prior, conditions: known)
        next = 0
        nextReplan = t + replanInterval
        if reporting { made.append(MadePlan(time: t, fetches: plan)) }
    }

    package mutating func reportPlans(_ on: Bool) { reporting = on }

    package mutating func drainPlans(into plans: inout [MadePlan]) {
        plans.append(contentsOf: made)
        made.removeAll(keepingCapacity: true)
    }
}
