import FetchCastCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The draws the habit generator needs, on top of ``SplitMix64/unit()``; each consumes a fixed
/// number of draws per call except ``poisson(mean:)`` and ``geometric(mean:)``, whose counts
/// depend only on earlier draws, so a seed gives one sequence.
extension SplitMix64 {
    /// A standard normal variate (Box–Muller, one of the pair).
    mutating func normal() -> Double {
        let u1 = 1 - unit()  // (0, 1]: log is finite
        let u2 = unit()
        return (-2 * log(u1)).squareRoot() * cos(2 * Double.pi * u2)
    }

    /// A uniform real in [lower, upper).
    mutating func uniform(_ lower: Double, _ upper: Double) -> Double {
        lower + (upper - lower) * unit()
    }

    /// Whether an event of probability `p` happens (one draw, also for p = 0 or 1).
    mutating func chance(_ p: Double) -> Bool { unit() < p }

    /// A Poisson count with the given mean (Knuth's product of uniforms; means up to ~700).
    mutating func poisson(mean: Double) -> Int {
        let limit = exp(-mean)
        var k = 0
        var product = unit()
        while product > limit {
            k += 1
            product *= unit()
        }
        return k
    }

    /// A geometric count ≥ 0 with the given mean (trials before the first success).
    mutating func geometric(mean: Double) -> Int {
        let p = 1 / (1 + mean)
        var k = 0
        while !chance(p) && k < 1000 { k += 1 }
        return k
    }

    /// An index drawn with probability proportional to `weights` (cumulative, ascending, last > 0).
    mutating func pick(cumulative weights: [Double]) -> Int {
        let r = unit() * weights[weights.count - 1]
        var i = 0
        while i < weights.count - 1 && weights[i] <= r { i += 1 }
        return i
    }
}
