import FetchCastCore
import Foundation

/// Bins for the time between consecutive launches of an app: bin 0 is `[0, τ)` (not a new
/// session), bins 1…30 split `[τ, 14 days)` evenly on a log scale, bin 31 is 14 days or more.
///
/// The gap distribution gives the *return* chance: given that the app was last launched Δ ago,
/// how likely is the next launch within the coming τ? For messaging and news apps that chance
/// is high just after the cache goes stale, which no hour-of-week histogram can see.
enum GapBins {
    /// Number of bins.
    static let count = 32
    static let span = 14.0 * 86_400

    @inline(__always)
    static func ratio(tau: Double) -> Double { pow(max(span / tau, 1.0001), 1.0 / 30) }

    /// The bin of a gap.
    @inline(__always)
    static func bin(_ gap: Double, tau: Double) -> Int {
        if gap < tau { return 0 }
        if gap >= span { return count - 1 }
        let i = Int(saturating: (log(gap / tau) / log(ratio(tau: tau))).rounded(.down)) + 1
        return min(max(i, 1), count - 2)
    }

    /// The lower edge of a bin.
    @inline(__always)
    static func lowerEdge(_ bin: Int, tau: Double) -> Double {
        bin == 0 ? 0 : tau * pow(ratio(tau: tau), Double(bin - 1))
    }

    /// P(gap ≥ x) from bin counts, log-uniform inside a bin (uniform in bin 0; the last bin's
    /// mass is taken to lie beyond 14 days).
    static func survival(_ x: Double, counts: [Double], total: Double, tau: Double) -> Double {
        guard total > 0 else { return 1 }
        if x <= 0 { return 1 }
        let b = bin(x, tau: tau)
        var above = 0.0
        for i in (b + 1)..<count { above += counts[i] }
        let low = lowerEdge(b, tau: tau)
        let high = b == count - 1 ? Double.infinity : lowerEdge(b + 1, tau: tau)
        var fractionAbove = 1.0
        if high.isFinite {
            fractionAbove = b == 0 ? (high - x) / (high - low) : log(high / x) / log(high / max(low, 1e-9))
        }
        return (above + counts[b] * max(0, min(1, fractionAbove))) / total
    }
}

/// ``GapBins/survival(_:counts:total:tau:)`` with its sums and logarithms computed once: what
/// a planner asks for hundreds of gaps of one app (one logarithm per call instead of seven
/// transcendental calls; equal up to rounding).
struct GapSurvival {
    let total: Double
    let tau: Double
    /// above[i] = Σ counts[j] for j ≥ i (above[count] = 0).
    private let above: [Double]
    private let counts: [Double]
    private let logTau: Double
    private let logRatio: Double

    init(counts: [Double], total: Double, tau: Double) {
        self.counts = counts
        self.total = total
        self.tau = tau
        var above = Array(repeating: 0.0, count: GapBins.count + 1)
        for i in stride(from: GapBins.count - 1, through: 0, by: -1) { above[i] = above[i + 1] + counts[i] }
        self.above = above
        logTau = log(tau)
        logRatio = log(GapBins.ratio(tau: tau))
    }

    /// P(gap ≥ x).
    @inline(__always)
    func survival(_ x: Double) -> Double {
        guard total > 0 else { return 1 }
        if x <= 0 { return 1 }
        if x < tau { return (above[1] + counts[0] * max(0, min(1, (tau - x) / tau))) / total }
        if x >= GapBins.span { return counts[GapBins.count - 1] / total }
        let lx = log(x)
        let b = min(max(Int(saturating: ((lx - logTau) / logRatio).rounded(.down)) + 1, 1), GapBins.count - 2)
        let high = logTau + Double(b) * logRatio
        return (above[b + 1] + counts[b] * max(0, min(1, (high - lx) / logRatio))) / total
    }
}

/// Bins for "how long ago was this app last launched" when another app is launched:
/// `[0, τ)`, `[τ, 2τ)`, `[2τ, 4τ)`, … `[32τ, ∞)`, and never.
enum ResponseBins {
    /// Number of bins.
    static let count = 8

    /// The bin of the time since the app's last launch (`nil`: never launched).
    @inline(__always)
    static func bin(sinceLast: Double?, tau: Double) -> Int {
        guard let d = sinceLast else { return count - 1 }
        if d < tau { return 0 }
        var edge = 2 * tau
        var b = 1
        while d >= edge && b < count - 2 {
            edge *= 2
            b += 1
        }
        return b
    }

    /// The second dimension: 0 when the device launched an app less than τ earlier (inside a
    /// burst of use), ``count`` when it had been idle for τ or more (a burst starts: every app
    /// not used in the last τ is a likely next session).
    @inline(__always)
    static func idleOffset(sinceAnyLaunch: Double?, tau: Double) -> Int {
        guard let d = sinceAnyLaunch, d < tau else { return count }
        return 0
    }
}
