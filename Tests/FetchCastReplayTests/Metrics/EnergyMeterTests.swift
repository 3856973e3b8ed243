import Foundation
import Testing
@testable import FetchCastReplay

struct EnergyMeterTests {
    /// Exactly representable numbers, so boundaries are exact.
    static let exact = EnergyProfile(
        name: "exact", promotionSeconds: 0.25, promotionWatts: 2, transferSeconds: 2, transferWatts: 1,
        tailSeconds: 11.5, tailWatts: 0.5)

    @Test func mergesFetchesWithinTheTailAndChargesFullTails() {
        var m = EnergyMeter(profile: Self.exact)
        let a = m.add(at: 0)  // promo 0.5 + xfer 2; transfer ends at 2.25
        let b = m.add(at: 5)  // same session: tail gap 2.75 × 0.5 + xfer 2
        let c = m.add(at: 100)  // 100 − 7 > 11.5: new session; closes the first with 11.5 × 0.5
        let last = m.finish()
        #expect(a.openedSession && !b.openedSession && c.openedSession)
        #expect(a.joules == 2.5 && b.joules == 1.375 + 2 && c.joules == 2.5)
        #expect(c.previousClosingTail == 5.75 && last == 5.75)
        #expect(m.sessions == 2)
        #expect(m.joules == 2.5 + 3.375 + 5.75 + 2.5 + 5.75)
    }

    @Test func aGapOfExactlyTheTailStaysInTheSession() {
        var m = EnergyMeter(profile: Self.exact)
        _ = m.add(at: 0)
        let b = m.add(at: 2.25 + 11.5)
        #expect(!b.openedSession)
        #expect(b.joules == 11.5 * 0.5 + 2)
    }

    @Test func simultaneousFetchesQueueTheirTransfers() {
        var m = EnergyMeter(profile: Self.exact)
        _ = m.add(at: 0)
        let b = m.add(at: 0)  // starts when the first transfer ends: no tail, no promotion
        _ = m.finish()
        #expect(b.joules == 2 && m.sessions == 1)
        #expect(m.joules == 0.5 + 2 + 2 + 5.75)
    }

    @Test func perFetchJoulesAddUpInAReplay() throws {
        var t = Trace()
        t.launch("x", at: 0)
        t.launch("y", at: 0)
        t.launch("x", at: 1000)
        let e = try evaluate(t, policies: ["scripted"], registry: scripted(t, [(0, "x"), (0, "y"), (5, "x"), (100, "y")]))
        let m = e.row("scripted")
        let lte = EnergyProfile.lte
        let promo = lte.promotionSeconds * lte.promotionWatts, xfer = lte.transferSeconds * lte.transferWatts
        let tail = lte.tailSeconds * lte.tailWatts
        // Session 1: 0 (x), 0 (y, queued to 2.26–4.26), 5 (x, gap 0.74 s); session 2: 100 (y).
        let expected = promo + xfer + xfer + 0.74 * lte.tailWatts + xfer + tail + promo + xfer + tail
        #expect(abs(m.joules - expected) < 1e-6)  // times are ~1.7e9 s: gaps carry ~1e-7 s of rounding
        #expect(m.wakeups == 2)
        #expect(e.fetchRecords[0].map(\.wakeup) == [1, 1, 1, 2])
        #expect(abs(e.fetchRecords[0].map(\.joules).reduce(0, +) - m.joules) < 1e-6)
    }

    @Test func shippedProfilesMatchTheBuiltInOnes() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        for name in ["lte", "wifi"] {
            let loaded = try EnergyProfile.load(root.appendingPathComponent("Data/energy/\(name).json").path)
            #expect(loaded == EnergyProfile.builtIn[name])
        }
    }

    @Test func aBadProfileIsAnError() throws {
        let path = NSTemporaryDirectory() + "fetchcast-bad-energy-\(getpid()).json"
        try Data(#"{"t_tail_s": -1}"#.utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(throws: EvaluationError.self) { try EnergyProfile.load(path) }
        #expect(throws: EvaluationError.self) { try EnergyProfile.load("/nonexistent/profile.json") }
    }
}
