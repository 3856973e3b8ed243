import FetchCastCore

/// The scheduler's constants; see docs/model.md for why each default is what it is.
public struct SchedulerConfiguration: Sendable, Hashable, Codable {
    /// Fetches per device per local day (the cap is ⌊budget⌋).
    public var budget: Double = 24
    /// Least time between two fetches of one app, seconds (iOS's minimum is 15 minutes).
    public var minimumInterval: Double = 900
    /// No fetch before this instant (Unix seconds), like `earliestBeginDate`.
    public var notBefore: Double?
    /// How often the policy looks ahead without a launch or an expiry to react to, seconds;
    /// `nil` (the default): only at launches, expiries and retries. Periodic looks spent the
    /// budget on low-value moments on the tuning users (docs/model.md).
    public var checkInterval: Double?
    /// Exponent on the trigger app's co-usage lift (odds scale) after a launch.
    public var coUsageLiftWeight: Double = 1.5
    /// The least chance that a fetch makes a session fresh for it to be worth a radio wakeup.
    public var minimumValue: Double = 0.05
    /// A fetch joins a wakeup that is happening anyway when its value is at least this fraction
    /// of the current threshold.
    public var coalesceFraction: Double = 0.75
    /// First retry delay after a failed fetch, seconds (doubles per failure, at most 1 hour).
    public var retryDelay: Double = 60
    /// Weight of yesterday's opportunity counts relative to today's when pacing the budget.
    public var pacingMemory: Double = 0.9
    /// Whether the scheduler also looks ahead of each app's habits (docs/model.md, "Anticipation"):
    /// at the start of the next window of the day that held a session of the app on at least
    /// ``anticipationMinimumShare`` of the recent days of its kind (and on at least
    /// ``ModelConfiguration/habitMinimumDays`` days).
    public var anticipates = true
    /// The least recency-weighted share of days with a session in a window of the day for the
    /// scheduler to look at its start.
    public var anticipationMinimumShare = 0.2
    /// The least share instead of ``anticipationMinimumShare`` while the device's budget is
    /// slack: a usual day of its history holds fewer opportunities worth ``minimumValue`` than
    /// half the cap (``LearnedPolicy/anticipationShare``). A window only this share admits must
    /// hold sessions on the days its share was read from (its day of the week, or its kind of
    /// day). A light user's budget is never spent elsewhere, so a look at a window of a looser
    /// habit costs only its joules. 0.1 chosen on the generated archetypes (docs/model.md,
    /// "Where the budget is slack"): the development trace's heavy users are not slack at caps
    /// up to 48. Set it to ``anticipationMinimumShare`` or above for one share on every day.
    public var slackAnticipationShare = 0.1
    /// How long after a device's last event its scheduler keeps looking ahead of its habits,
    /// seconds (a week): a device not heard from for longer is not fetched for.
    public var anticipationSilence: Double = 7 * 86_400
    /// Whether the scheduler looks before the device's first use after a silence (the pickup
    /// clock, docs/model.md "The pickup clock"). Only a scheduler told of every launch on the
    /// device can tell the device's silence from a pause of the apps it is told of: one that
    /// sees a single app's events (an app's own backend or `BGAppRefreshTask`, `evaluate
    /// --visibility app`) would take each pause of that app for the device's and look before
    /// the app's next use, which its own habits and gaps already weigh. Set it to `false` there;
    /// ``PlannedPolicy`` does when it does not see the device. On the development trace's
    /// held-out users, visibility `app` at a cap of 24 made 0.133 of the needy launches fresh
    /// for 111.4 J a device-day with the pickup clock and 0.162 for 86.0 J without it.
    public var looksBeforePickups = true
    /// How long before the earliest session its history holds in a habit's window a look ahead
    /// deferred from a metered (or unknown) network on battery comes at the latest, seconds
    /// (``LearnedPolicy/deferCostlyLook(_:at:)``, docs/model.md "Where it looks"); `nil`: looks
    /// ahead are not deferred.
    public var deferredLookLead: Double? = 300
    /// Whether the live policy weighs the device's conditions (`state` rows) when it starts a
    /// radio wakeup. Without `state` rows it decides exactly as a condition-blind policy.
    public var conditionAware = true
    /// The bar's factor for a wakeup started on a metered (or unknown) network on battery: an
    /// LTE wakeup costs about 26× a Wi-Fi one (Data/energy/), and nothing while charging.
    public var cellularBarFactor = 1.15
    /// The bar's factor for a wakeup started on Wi-Fi on battery.
    public var wifiBarFactor = 0.8
    /// The bar's further factor on Wi-Fi when the device is usually off Wi-Fi in the next hour
    /// (``ConditionHabits/wifiShare(slot:)`` < 0.5): the last cheap moment before it leaves.
    /// The three factors were tuned on the training users with the generated conditions of
    /// docs/model.md ("Device conditions").
    public var leavingWiFiBarFactor = 0.8
    /// What a radio wakeup on a metered (or unknown) network on battery must be worth, in
    /// sessions made fresh, beyond the budget it spends; `nil`: the bar × ``cellularBarFactor``
    /// instead, which is also the rule until the device has ``OutcomeFit/minimumCount`` resolved
    /// forecasts.
    ///
    /// A value is a forecast that the policy labels τ later; per device, a line fitted to those
    /// labels (one for fetches reacting to a launch, one for the others) turns values into the
    /// chance that the fetch makes a session fresh. A cellular wakeup goes ahead when its
    /// fetches' chances, each less that of a fetch at the bar (what the slot is worth elsewhere
    /// in the day), add up to this cost. The values' spread says little on some devices (a line
    /// nearly flat: a wakeup at a high value makes hardly more sessions fresh than one at the
    /// bar) and much on others, and the bar alone cannot tell them apart; in these units a
    /// device whose values say little starts few cellular wakeups, and one whose values say much
    /// keeps most of them. On the training users with the generated conditions (docs/model.md,
    /// "Device conditions") 0.045 spends 32% fewer battery joules than the condition-blind policy
    /// at a hit rate 0.006 lower (the factor alone: 21% at 0.005); costs of 0.035–0.055 give
    /// 29–35% at 0.005–0.011. On the held-out users, measured once: 39% at 0.015.
    public var cellularWakeupCost: Double? = 0.045
    /// The share of ``cellularWakeupCost`` one more fetch in the same cellular wakeup adds (its
    /// transfer, 2.4 J of an LTE wakeup's 14.9 J in Data/energy/): a fetch joins a cellular
    /// wakeup when its chance is at least that of a fetch at ``coalesceFraction`` of the bar
    /// plus this share of the cost.
    public var cellularJoinCostShare = 0.16
    /// The apps' constraints and the system's rules (`--constraints`, `--system`), by app id;
    /// `nil`: none. A condition-aware scheduler (``conditionAware``) weighs only the fetches
    /// they allow under the conditions it knows (unknown ones count as docs/conditions.md says),
    /// so it never decides, and never plans, a fetch they refuse; a condition-blind one cannot
    /// tell and decides as without them.
    public var constraints: SchedulerConstraints?

    /// The defaults.
    public init() {}

    /// Defaults with another budget.
    public init(budget: Double) { self.budget = budget }

    /// ⌊budget⌋, at most `Int.max` (a budget past it does not trap; callers refuse budgets
    /// outside ``Limits/budget`` before they get here).
    public var dailyCap: Int { Int(saturating: budget.rounded(.down)) }
}

extension SchedulerConfiguration {
    /// The factor on the pacer's bar for a radio wakeup started at `t` under `conditions`, with
    /// the device's habits: 1 while charging (the battery pays nothing); on Wi-Fi
    /// ``wifiBarFactor``, × ``leavingWiFiBarFactor`` when the next hour is usually off Wi-Fi;
    /// otherwise (metered or unknown network) ``cellularBarFactor``. The live policy and plans
    /// use this one rule.
    public func barFactor(_ conditions: DeviceConditions, habits: ConditionHabits, at t: Double, utcOffsetSeconds offset: Int32) -> Double {
        if conditions.isCharging { return 1 }
        if conditions.isUnmetered {
            let next = habits.wifiShare(slot: HourOfWeek.slot(t + 3600, offset: offset))
            return wifiBarFactor * (next.map { $0 < 0.5 } == true ? leavingWiFiBarFactor : 1)
        }
        return cellularBarFactor
    }
}
