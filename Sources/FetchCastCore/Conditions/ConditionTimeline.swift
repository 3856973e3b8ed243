/// One device's conditions over time, built from its `state` rows in time order: a state holds
/// from its row's instant (inclusive) until the device's next row that sets the same field;
/// before the first row that sets a field, that field is unknown (see ``DeviceConditions`` for
/// how unknown is treated).
///
/// Answers "what held at instant t" by binary search, so a planner can ask about the future
/// of a recorded trace as cheaply as the present. Rows at the same instant apply in order.
///
/// - Complexity: ``append(_:atMicros:)`` O(1) amortised; ``conditions(atMicros:)`` O(log n) in
///   the rows appended.
package struct ConditionTimeline: Sendable, Hashable {
    /// The instants of the rows, non-decreasing.
    package private(set) var times: [Int64] = []
    /// The conditions holding from each instant on (every row before it applied).
    package private(set) var states: [DeviceConditions] = []

    /// Creates an empty timeline (every field unknown at every instant).
    package init() {}

    /// Creates a timeline from rows in time order.
    package init(_ rows: some Sequence<(timeMicros: Int64, change: ConditionChange)>) {
        for r in rows { append(r.change, atMicros: r.timeMicros) }
    }

    /// The conditions after the last row.
    package var latest: DeviceConditions { states.last ?? .unknown }

    /// Whether no row was appended.
    package var isEmpty: Bool { times.isEmpty }

    /// Adds a `state` row at `timeMicros`, which must not be before the previous row's.
    /// - Precondition: `timeMicros` ≥ the last appended instant.
    package mutating func append(_ change: ConditionChange, atMicros timeMicros: Int64) {
        precondition(times.last.map { timeMicros >= $0 } ?? true, "state rows must come in time order")
        var next = latest
        next.apply(change)
        if times.last == timeMicros {
            states[states.count - 1] = next
        } else {
            times.append(timeMicros)
            states.append(next)
        }
    }

    /// What held at `timeMicros`: every row at or before it applied.
    package func conditions(atMicros timeMicros: Int64) -> DeviceConditions {
        var low = 0, high = times.count
        while low < high {
            let mid = (low + high) / 2
            if times[mid] <= timeMicros { low = mid + 1 } else { high = mid }
        }
        return low == 0 ? .unknown : states[low - 1]
    }

    /// What held at `time` (Unix seconds, rounded to the nearest microsecond, so that a time
    /// computed as `Double(micros) / 1e6` finds the row at `micros`).
    package func conditions(at time: Double) -> DeviceConditions {
        conditions(atMicros: Int64((time * 1_000_000).rounded()))
    }
}
