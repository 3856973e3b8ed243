import FetchCastCore
import FetchCastModel
import FetchCastTrace
import Testing
@testable import FetchCastReplay

/// Properties that hold on any trace, checked on seeded random ones.
struct ReplayPropertyTests {
    static let policies = ["none", "interval", "oracle", "hourly", "weekly", "learned"]

    @Test(arguments: [1, 2, 3] as [UInt64])
    func everyPolicyKeepsItsDailyCap(seed: UInt64) throws {
        let t = randomTrace(seed: seed)
        let e = try evaluate(t, policies: Self.policies, budgets: [2, 5.5, 12])
        for (i, row) in e.summary.enumerated() {
            // Not vacuous: every policy but `none` fetched.
            // (`weekly` has ⌊B/k⌋ a day per app: nothing below B = k, at most 5.)
            let idle = row.policy == "none" || (row.policy == "weekly" && row.budget < 5)
            #expect(idle || !e.fetchRecords[i].isEmpty, "\(row.policy) \(row.budget) made no fetch")
            if row.policy == "interval" {
                // Uncapped by definition: it never asks the engine for more than its polls.
                #expect(row.metrics.refusedFetches == 0)
                continue
            }
            let cap = Int(row.budget.rounded(.down))
            var perDay: [String: Int] = [:]
            for f in e.fetchRecords[i] {
                // The oracle counts by its launch's local day (1 s later); the others by the fetch's.
                let time = row.policy == "oracle" ? f.time + 1 : f.time
                perDay["\(f.device)/\(LocalTime.day(time: time, utcOffsetSeconds: f.utcOffsetSeconds))", default: 0] += 1
            }
            #expect(perDay.values.allSatisfy { $0 <= cap }, "\(row.policy) \(row.budget)")
        }
    }

    @Test(arguments: [7, 8] as [UInt64])
    func plansSeenPerAppKeepEachAppsCapAndNeverRunOverTheDevicesCap(seed: UInt64) throws {
        let t = randomTrace(seed: seed, events: 800)  // plans are the costly part: a shorter trace
        for visibility in PlanningOptions.Visibility.allCases {
            let registry = PolicyRegistry.standard(population: nil, planning: PlanningOptions(replanOnEvent: true, visibility: visibility))
            let e = try evaluate(t, policies: ["planned"], budgets: [7, 24], registry: registry)
            for (i, row) in e.summary.enumerated() {
                #expect(!e.fetchRecords[i].isEmpty, "\(visibility) \(row.budget) made no fetch")
                // The planner keeps its own caps: the engine never has to refuse a fetch.
                #expect(row.metrics.refusedFetches == 0, "\(visibility) \(row.budget)")
                var perDay: [String: Int] = [:]
                var perApp: [String: Int] = [:]
                for f in e.fetchRecords[i] {
                    let day = LocalTime.day(time: f.time, utcOffsetSeconds: f.utcOffsetSeconds)
                    perDay["\(f.device)/\(day)", default: 0] += 1
                    perApp["\(f.device)/\(day)/\(f.app)", default: 0] += 1
                }
                #expect(perDay.values.allSatisfy { $0 <= Int(row.budget) })
                if visibility == .app {
                    // ⌊B/k⌋ per app: every device of these traces has 5 fetch-enabled apps.
                    #expect(perApp.values.allSatisfy { $0 <= Int(row.budget) / 5 })
                }
            }
        }
    }

    /// An app's own backend (visibility `app`) cannot tell the device's silence from a pause of
    /// its app: its plans never look before a pickup, while a backend that sees the device does
    /// (docs/model.md, "Only a scheduler that sees the device looks before a pickup").
    @Test func plansSeenPerAppMakeNoLookBeforeAPickup() throws {
        let t = randomTrace(seed: 9)
        var pickups: [PlanningOptions.Visibility: Int] = [:]
        for visibility in PlanningOptions.Visibility.allCases {
            let registry = PolicyRegistry.standard(population: nil, planning: PlanningOptions(replanOnEvent: true, visibility: visibility))
            let e = try evaluate(t, policies: ["planned"], budgets: [24], registry: registry)
            pickups[visibility] = e.fetchRecords[0].count { if case .pickup = $0.reason { true } else { false } }
        }
        #expect(pickups[.device, default: 0] > 0, "not vacuous: the device's plans look before pickups")
        #expect(pickups[.app] == 0)
    }

    @Test(arguments: [4, 5, 6] as [UInt64])
    func noFetchMakesMoreThanOneNeedyLaunchFresh(seed: UInt64) throws {
        let t = randomTrace(seed: seed)
        let e = try evaluate(t, policies: Self.policies, budgets: [24], tau: 3600)
        for (i, row) in e.summary.enumerated() {
            var covered: [String: Int] = [:]
            for l in e.launchRecords[i] where l.needy && l.fresh {
                if let f = l.coveringFetch { covered["\(l.device)/\(f)", default: 0] += 1 }
            }
            // Not vacuous: every policy but `none` made some needy launch fresh.
            #expect(covered.isEmpty == (row.policy == "none"), "\(row.policy) covered \(covered.count) needy launches")
            #expect(covered.values.allSatisfy { $0 == 1 }, "\(row.policy)")
            // The counters agree with the records.
            #expect(row.metrics.freshNeedyLaunches == e.launchRecords[i].filter { $0.needy && $0.fresh }.count)
            #expect(row.metrics.scoredLaunches == e.launchRecords[i].count)
            #expect(row.metrics.fetches == e.fetchRecords[i].count)
            #expect(abs(e.fetchRecords[i].map(\.joules).reduce(0, +) - row.metrics.joules) < 1e-6)
        }
    }

    @Test func resultsDoNotDependOnTheThreadCount() throws {
        let t = randomTrace(seed: 9, devices: 7)
        let one = try evaluate(t, policies: Self.policies, budgets: [6, 24], threads: 1)
        let many = try evaluate(t, policies: Self.policies, budgets: [6, 24], threads: 4)
        #expect(one.summary == many.summary)
        #expect(one.devices == many.devices)
    }

    @Test(arguments: [7, 8] as [UInt64])
    func theLearnedPolicyReportsEveryFetchItWeighed(seed: UInt64) throws {
        let t = randomTrace(seed: seed)
        let e = try evaluate(t, policies: Self.policies, budgets: [4, 24])
        for (i, row) in e.summary.enumerated() {
            let decisions = e.decisionRecords[i]
            guard row.policy == "learned" else {
                #expect(decisions.isEmpty, "\(row.policy) reports no decisions")
                continue
            }
            #expect(!decisions.isEmpty)
            #expect(decisions.allSatisfy { (0...1).contains($0.decision.value) && (0...1).contains($0.decision.launchProbability) })
            // Every fetch made is a weighed fetch the policy took, at the same instant.
            let taken = Set(decisions.filter(\.decision.fetched).map { "\($0.device)/\($0.decision.app)/\($0.time)" })
            let made = e.fetchRecords[i].map { "\($0.device)/\($0.app)/\($0.time)" }
            #expect(!made.isEmpty, "the learned policy fetched at budget \(row.budget)")
            #expect(made.allSatisfy(taken.contains), "\(row.budget)")
            #expect(made.count + row.metrics.refusedFetches == taken.count)
            // A fetch taken below the bar joined another app's wakeup at the same instant.
            for d in decisions where d.decision.fetched && d.decision.value < d.decision.bar {
                #expect(decisions.contains { $0.device == d.device && $0.time == d.time && $0.decision.fetched && $0.decision.value >= $0.decision.bar })
            }
        }
    }
}

