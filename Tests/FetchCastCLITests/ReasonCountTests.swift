import Foundation
import Testing

/// Every count a planned fetch's reason cites is what the device's history says, and the chance
/// it prints is the one those counts give (issue 39 item 6): `predict` is asked for every device
/// at several instants, a week ahead, and each habit reason ("opened X between 07:00 and 07:30
/// on 9 of the last 14 weekdays it was used") and pickup reason ("was first used by 08:19 on 9
/// of the 14 weekdays it was still silent at 07:49, and 32 of its last 63 pickups after 2 h
/// unused began with X (p=0.31)") is counted again here from the trace's launches before the
/// instant, by the rules docs/model.md states, written from the days' side rather than the
/// logs' (``HistoryCounts``).
struct ReasonCountTests {
    /// What the walk checked: reasons of each kind, and the mismatches (with their reason).
    struct Walk {
        var habits = 0
        var pickups = 0
        var others = 0
        var mismatches: [String] = []
    }

    /// Plans every device from each of `instants` (a week ahead) and checks every habit and
    /// pickup reason against `traces`' launches.
    static func walk(_ w: Workspace, traces: [String], instants: [String]) throws -> Walk {
        let history = try HistoryCounts(csv: traces.map(Self.text(of:)))
        var walk = Walk()
        for at in instants {
            let r = try w.run(["predict", "--at", at, "--horizon", "168", "--count", "1000", "--format", "json"])
            #expect(r.status == 0, "\(r.err)")
            let start = try #require(HistoryCounts.unixSeconds(at), "\(at)")
            for line in r.out.split(separator: "\n") {
                let p = try JSONDecoder().decode(PredictCLITests.PredictionRecord.self, from: Data(line.utf8))
                let offset = try #require(HistoryCounts.utcOffset(p.fetch_at), "\(p.fetch_at)")
                let launches = history.launches(of: p.device, before: start)
                let local = p.fetch_at_unix + Double(offset)
                if let cited = PickupReason(p.reason) {
                    walk.pickups += 1
                    let expected = HistoryCounts.pickup(launches, app: cited.app, windowStart: local, everyDay: cited.everyDay)
                    if cited.counts != expected.counts || cited.clock != HistoryCounts.clock(local, local + HistoryCounts.tau)
                        || abs(cited.probability - expected.probability) > 0.005 + 1e-9
                    {
                        walk.mismatches.append("\(at) \(p.device): \(p.reason)\n  history: \(expected.counts), p=\(expected.probability)")
                    }
                    // No count of 0 carries a fetch: the window held pickups and the app began some.
                    if cited.counts.firstUsed == 0 || cited.counts.beganWith == 0 { walk.mismatches.append("\(at) \(p.device): \(p.reason)") }
                } else if let cited = HabitReason(p.reason) {
                    walk.habits += 1
                    let expected = HistoryCounts.habit(launches, app: cited.app, windowStart: local, days: cited.days)
                    if cited.counts != expected || cited.clock != HistoryCounts.clock(local, local + HistoryCounts.tau) {
                        walk.mismatches.append("\(at) \(p.device): \(p.reason)\n  history: \(expected)")
                    }
                    if cited.counts.withSession == 0 { walk.mismatches.append("\(at) \(p.device): \(p.reason)") }
                } else {
                    walk.others += 1
                    // Every reason that cites counts is one of the two above.
                    if p.reason.contains(" of the last ") || p.reason.contains(" of its last ") {
                        walk.mismatches.append("unparsed: \(p.reason)")
                    }
                }
            }
        }
        return walk
    }

    /// The bundled sample and generated habits of every archetype (seed 3, two devices each).
    @Test func theSampleAndTheArchetypesReasonsCountTheirHistory() throws {
        let w = try Workspace()
        #expect(try w.run([
            "habits", "generate", "--seed", "3", "--devices-per-archetype", "2", "--archetypes",
            "morning-reader,commuter,shift-worker,weekend-reader,evening-reader,heavy,daily-0800,gym-mwf,anytime-mail,heavy-early",
            "-o", "habits.csv",
        ]).status == 0)
        #expect(try w.run(["ingest", "--quiet", PostgresCLITests.sample, "habits.csv"]).status == 0)
        let walk = try Self.walk(w, traces: [PostgresCLITests.sample, w.path("habits.csv")], instants: [
            "2013-11-20T03:00:00Z", "2013-12-18T07:00:00Z", "2014-01-15T03:00:00Z", "2024-03-20T02:00:00+01:00", "2024-04-01T12:00:00+01:00",
        ])
        #expect(walk.mismatches.isEmpty, "\(walk.mismatches.prefix(5).joined(separator: "\n"))")
        // Measured: 132 pickup and 734 habit reasons.
        #expect(walk.pickups >= 100 && walk.habits >= 500, "the walk saw few reasons: \(walk.pickups) pickup, \(walk.habits) habit")
    }

    /// The development trace (not shipped; skipped without ../shared), from six instants.
    @Test(.enabled(if: DocSection.hasDevelopmentTrace, "needs ../shared/data/ubiqlog-dev.csv.gz"))
    func theDevelopmentTracesReasonsCountTheirHistory() throws {
        let w = try Workspace()
        #expect(try w.run(["ingest", "--quiet", DocSection.development]).status == 0)
        let walk = try Self.walk(w, traces: [DocSection.development], instants: [
            "2013-11-20T02:00:00Z", "2013-12-04T07:00:00Z", "2013-12-18T13:00:00Z", "2014-01-08T02:00:00Z", "2014-06-01T02:00:00Z",
            "2014-11-20T22:00:00Z",
        ])
        #expect(walk.mismatches.isEmpty, "\(walk.mismatches.prefix(5).joined(separator: "\n"))")
        // Measured: 111 pickup and 368 habit reasons.
        #expect(walk.pickups >= 80 && walk.habits >= 250, "the walk saw few reasons: \(walk.pickups) pickup, \(walk.habits) habit")
    }

    /// A CSV file's text, gunzipped when it is gzip.
    static func text(of path: String) throws -> String {
        try PlannedMatchesPredictCLITests.lines(path).joined(separator: "\n")
    }
}

/// A pickup reason's words: "D was first used by HH:MM on K of the N <days> it was still silent
/// at HH:MM, and A of its last P pickups after 2 h unused began with X (p=…)".
struct PickupReason {
    var counts: HistoryCounts.PickupCounts
    var clock: String
    var everyDay: Bool
    var app: String
    var probability: Double

    init?(_ reason: String) {
        let pattern = #/^\S+ was first used by (\d\d:\d\d) on (\d+) of the (\d+) (weekdays?|weekend days?|days?) it was still silent at (\d\d:\d\d), and (\d+) of its last (\d+) pickups? after 2 h unused began with (\S+) \(p=([0-9.]+)\)/#
        guard let m = reason.firstMatch(of: pattern), let k = Int(m.2), let n = Int(m.3), let a = Int(m.6), let p = Int(m.7),
              let probability = Double(m.9)
        else { return nil }
        counts = .init(firstUsed: k, atRisk: n, beganWith: a, pickups: p)
        clock = "\(m.5)–\(m.1)"
        everyDay = m.4.hasPrefix("day")
        app = String(m.8)
        self.probability = probability
    }
}

/// A habit reason's words: "D opened X between HH:MM and HH:MM on K of the last N <days> it was
/// used (p=…)", where <days> names a kind of day or a day of the week.
struct HabitReason {
    var counts: HistoryCounts.HabitCounts
    var clock: String
    var app: String
    var days: HistoryCounts.DaysCounted

    init?(_ reason: String) {
        let pattern = #/^\S+ opened (\S+) between (\d\d:\d\d) and (\d\d:\d\d) on (\d+) of the last (\d+) (weekdays?|weekend days?|[A-Z][a-z]+days?) it was used \(p=/#
        guard let m = reason.firstMatch(of: pattern), let k = Int(m.4), let n = Int(m.5) else { return nil }
        app = String(m.1)
        clock = "\(m.2)–\(m.3)"
        counts = .init(withSession: k, counted: n)
        let word = String(m.6)
        if word.hasPrefix("weekend") {
            days = .weekend
        } else if word.hasPrefix("weekday") {
            days = .weekdays
        } else if let i = HistoryCounts.dayNames.firstIndex(where: { word.hasPrefix($0) }) {
            days = .dayOfWeek(i)
        } else {
            return nil
        }
    }
}
