import FetchCastCore
import Foundation

/// Spends a daily fetch budget on the most valuable moments.
///
/// It remembers how many opportunities of each value arose in each local hour of the day
/// (recency-weighted over days), and sets the bar so that the opportunities expected in the
/// rest of the day above the bar match the fetches left today: a threshold policy for an
/// online knapsack. On a device's first day it has no history and spends first come, first
/// served above ``SchedulerConfiguration/minimumValue``.
package struct BudgetPacer: Sendable {
    static let bins = 40
    /// Opportunities per (hour of day, value bin), recency-weighted over days.
    var histogram: [Double] = Array(repeating: 0, count: 24 * 40)
    /// Days observed, recency-weighted like the histogram.
    var days: Double = 0
    var today: [Double] = Array(repeating: 0, count: 24 * 40)
    var currentDay: Int?
    let memory: Double
    /// Per app, the opportunity counted last: when it started and where it was counted, so
    /// repeated looks at one app within a window count as one opportunity (its best value).
    var open: [Int32: OpenOpportunity] = [:]

    struct OpenOpportunity: Sendable {
        var start: Double
        var index: Int
    }

    /// Creates a pacer forgetting with `memory` per day.
    package init(memory: Double) { self.memory = memory }

    @inline(__always)
    static func bin(_ value: Double) -> Int {
        // Log scale over [0.001, 1].
        let v = max(value, 0.001)
        return min(bins - 1, max(0, Int(saturating: ((log10(v) + 3) / 3 * Double(bins)).rounded(.down))))
    }

    @inline(__always)
    static func lowerEdge(_ bin: Int) -> Double { pow(10, Double(bin) / Double(bins) * 3 - 3) }

    /// Moves to a new local day: folds today's counts into the memory.
    package mutating func startDay(_ day: Int) {
        guard day != currentDay else { return }
        if currentDay != nil {
            for i in 0..<histogram.count {
                histogram[i] = histogram[i] * memory + today[i]
                today[i] = 0
            }
            days = days * memory + 1
        }
        // Counts of a window opened yesterday were folded into the history: a look today
        // opens a new opportunity.
        open.removeAll()
        currentDay = day
    }

    /// Records an opportunity of some value at a local hour.
    package mutating func record(value: Double, hour: Int) {
        today[hour * Self.bins + Self.bin(value)] += 1
    }

    /// Records an opportunity to fetch `app` at `time`: looks at the same app less than `window`
    /// after the one that opened its opportunity count once, at the best value seen (one fetch
    /// could have been made of them all).
    package mutating func record(value: Double, hour: Int, app: Int32, time: Double, window: Double) {
        let index = hour * Self.bins + Self.bin(value)
        if let o = open[app], time - o.start < window {
            if index > o.index, o.index / Self.bins == hour {
                today[o.index] -= 1
                today[index] += 1
                open[app]!.index = index
            }
            return
        }
        record(value: value, hour: hour)
        open[app] = OpenOpportunity(start: time, index: index)
    }

    /// The opportunities worth at least `value` (from the value bin holding it) a usual day
    /// holds, recency-weighted over the days observed; `nil` before a day is known.
    package func usualDayOpportunities(atLeast value: Double) -> Double? {
        guard days > 0.5 else { return nil }
        let from = Self.bin(value)
        var n = 0.0
        for h in 0..<24 {
            for b in from..<Self.bins { n += histogram[h * Self.bins + b] }
        }
        return n / days
    }

    /// The value a fetch must reach at local hour `hour` when `remaining` fetches are left today.
    ///
    /// The expected rest-of-day counts are scaled by how busy today has been so far against a
    /// usual day up to the same hour (between 0.5× and 3×): heavy days raise the bar early.
    package func threshold(hour: Int, remaining: Int, floor: Double) -> Double {
        guard remaining > 0 else { return .infinity }
        guard days > 0.5 else { return floor }
        var usualSoFar = 0.0, todaySoFar = 0.0
        for i in 0..<((hour + 1) * Self.bins) {
            usualSoFar += histogram[i]
            todaySoFar += today[i]
        }
        usualSoFar /= days
        let busy = usualSoFar > 1 ? max(0.5, min(3, todaySoFar / usualSoFar)) : 1
        var expected = 0.0
        var b = Self.bins - 1
        while b >= 0 {
            var inBin = 0.0
            for h in hour..<24 { inBin += histogram[h * Self.bins + b] }
            inBin *= busy / days
            if expected + inBin > Double(remaining) { break }
            expected += inBin
            b -= 1
        }
        // b is the first bin that would overspend: the bar sits at its upper edge.
        let bar = b < 0 ? 0 : Self.lowerEdge(b + 1)
        return max(bar, floor)
    }
}

extension BudgetPacer {
    /// Writes the pacer's state (``LearnedPolicy/savedState()``).
    func write(to w: inout BinaryWriter) {
        w.doubles(histogram)
        w.double(days)
        w.doubles(today)
        w.optionalInt(currentDay)
        w.double(memory)
        w.int(open.count)
        for app in open.keys.sorted() {
            w.int32(app)
            w.double(open[app]!.start)
            w.int(open[app]!.index)
        }
    }

    /// Reads what ``write(to:)`` wrote.
    init(reading r: inout BinaryReader) throws {
        let histogram = try r.doubles(), days = try r.double(), today = try r.doubles(), currentDay = try r.optionalInt()
        self.init(memory: try r.double())
        guard histogram.count == self.histogram.count, today.count == self.today.count else { throw BinaryReader.Malformed() }
        (self.histogram, self.days, self.today, self.currentDay) = (histogram, days, today, currentDay)
        for _ in 0..<(try r.count()) {
            let app = try r.int32()
            open[app] = OpenOpportunity(start: try r.double(), index: try r.int())
            guard (0..<histogram.count).contains(open[app]!.index) else { throw BinaryReader.Malformed() }
        }
    }
}
