import FetchCastCore

/// Hour-of-week slots (0 = Monday 00:00–01:00 local … 167 = Sunday 23:00–24:00) and spreading an
/// interval's duration over the slots it covers.
package enum HourOfWeek {
    /// Slots in a week.
    package static let count = 168

    /// The slot of an instant on a device's local clock.
    @inline(__always)
    package static func slot(_ time: Double, offset: Int32) -> Int {
        LocalTime.hourOfWeek(time: time, utcOffsetSeconds: offset)
    }

    /// Calls `body(slot, seconds)` for each slot the local interval `[start, end)` overlaps.
    ///
    /// - Complexity: O(min(hours spanned, 168)); intervals longer than a week add whole weeks
    ///   evenly first.
    package static func spread(from start: Double, to end: Double, offset: Int32, _ body: (Int, Double) -> Void) {
        guard end > start else { return }
        var a = start
        let week = 7.0 * 86_400
        let length = end - start
        if length >= week {
            let weeks = (length / week).rounded(.down)
            for s in 0..<count { body(s, weeks * 3600) }
            a += weeks * week
        }
        while a < end {
            let local = a + Double(offset)
            let hourEnd = ((local / 3600).rounded(.down) + 1) * 3600 - Double(offset)
            let b = min(end, hourEnd)
            body(slot(a, offset: offset), b - a)
            a = b
        }
    }
}
