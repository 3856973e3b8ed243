/// The order in which the events of one instant reach a fetch policy: the one rule that the
/// replay, the store's catch-up of a scheduler, a live ``EventKind``-driven scheduler, the tests'
/// policy driver and an embedding app follow (docs/evaluation.md, "Inputs and ordering").
///
/// Events reach a policy in time order. At one instant t, on one device:
/// 1. the policy's looks (wakeups) before t have been run;
/// 2. the publishes at t: those to every device first, then the device's own;
/// 3. the `state` rows at t (a state holds from its instant on, so a look at t sees it);
/// 4. the policy's looks at t, and the fetches they make;
/// 5. the launches and input `fetch` events at t (a fetch that reacts to a launch comes after it).
///
/// Within one step, events keep the order they came in: a trace's line order, the store's ids.
/// A store or a trace reader returns plain time order (time, then input order); only the
/// consumer that delivers events to a policy arranges an instant, with ``arrange(_:time:step:)``,
/// ``forEach(in:step:looks:_:)`` or an ``InstantOrder/Buffer`` over a stream.
public enum InstantOrder {
    /// Where an event, or the policy's looks, stand among the things that happen at one instant.
    public enum Step: UInt8, Sendable, Hashable, Comparable, CaseIterable {
        /// A publish to every device.
        case publishToEveryDevice = 0
        /// A publish to this device.
        case publish = 1
        /// A `state` row of the device.
        case state = 2
        /// The policy's looks (wakeups) at the instant: not an event.
        case looks = 3
        /// A launch, or a background fetch recorded in the input.
        case launchOrFetch = 4

        public static func < (a: Step, b: Step) -> Bool { a.rawValue < b.rawValue }
    }

    /// The step of an event of `kind` (`everyDevice`: a publish with no device).
    @inlinable
    public static func step(of kind: EventKind, everyDevice: Bool = false) -> Step {
        switch kind {
        case .publish: everyDevice ? .publishToEveryDevice : .publish
        case .state: .state
        case .launch, .fetch: .launchOrFetch
        }
    }

    /// Whether an event of `kind` at t reaches the policy before its looks at t (publishes and
    /// `state` rows); a launch or a fetch at t comes after them.
    @inlinable
    public static func precedesLooks(_ kind: EventKind) -> Bool { step(of: kind) < .looks }

    /// Puts events that are in time order into this rule's order: within each instant, by
    /// ``Step``, keeping the input order within a step (a stable sort).
    /// - Parameters:
    ///   - events: Events in non-decreasing `time`.
    ///   - time: The instant of an event (any resolution, the same for all).
    ///   - step: The ``Step`` of an event.
    /// - Complexity: O(n + Σ k²) for instants of k events each (an instant holds a few).
    public static func arrange<Event, Time: Comparable>(
        _ events: inout [Event], time: (Event) -> Time, step: (Event) -> Step
    ) {
        // Insertion sort, moving an event back only past events of its instant of a later step.
        var i = events.startIndex + 1
        while i < events.endIndex {
            let e = events[i]
            let (t, s) = (time(e), step(e))
            var j = i
            while j > events.startIndex, time(events[j - 1]) == t, step(events[j - 1]) > s {
                events[j] = events[j - 1]
                j -= 1
            }
            if j != i { events[j] = e }
            i += 1
        }
    }

    /// Sorts events into time order and each instant into this rule's order, keeping the input
    /// order of events of the same instant and step (a stable sort).
    /// - Parameters:
    ///   - events: Events in any order.
    ///   - time: The instant of an event (any resolution, the same for all).
    ///   - step: The ``Step`` of an event.
    /// - Complexity: O(n log n).
    public static func sort<Event, Time: Comparable>(
        _ events: inout [Event], time: (Event) -> Time, step: (Event) -> Step
    ) {
        let keyed = events.indices.map { (time: time(events[$0]), step: step(events[$0]), index: $0) }
        let order = keyed.sorted { ($0.time, $0.step, $0.index) < ($1.time, $1.step, $1.index) }
        events = order.map { events[$0.index] }
    }

    /// Delivers the events of one instant in this rule's order, and runs the policy's looks at
    /// that instant at their place (always, once, even when no event follows them).
    /// - Parameters:
    ///   - events: The events of one instant, in input order.
    ///   - step: The ``Step`` of an event.
    ///   - looks: Runs the policy's looks at the instant (those before it have run already).
    ///   - body: Delivers one event.
    /// - Complexity: O(events × steps).
    @inlinable
    public static func forEach<Events: Collection>(
        in events: Events, step: (Events.Element) -> Step, looks: () throws -> Void, _ body: (Events.Element) throws -> Void
    ) rethrows {
        for s in Step.allCases {
            if s == .looks {
                try looks()
                continue
            }
            for e in events where step(e) == s { try body(e) }
        }
    }

    /// Arranges a stream of events in time order one instant at a time: ``add(_:time:step:to:)``
    /// holds the events of the current instant and hands them on, in this rule's order, once an
    /// event of a later instant (or ``flush(to:)``) ends it.
    public struct Buffer<Event> {
        private var held: [(event: Event, step: Step)] = []
        private var instant: Int64 = .min

        /// An empty buffer.
        public init() {}

        /// Takes the next event of the stream (at `time`, not before the previous one's); hands
        /// `body` the events of the instant it ends, if any.
        public mutating func add(_ event: Event, time: Int64, step: Step, to body: (Event) throws -> Void) rethrows {
            if time != instant {
                try flush(to: body)
                instant = time
            }
            held.append((event, step))
        }

        /// Hands `body` the events held (those of the last instant), in this rule's order.
        public mutating func flush(to body: (Event) throws -> Void) rethrows {
            defer { held.removeAll(keepingCapacity: true) }
            if held.count == 1 {
                try body(held[0].event)
                return
            }
            var arranged = held
            InstantOrder.arrange(&arranged, time: { _ in 0 }, step: { $0.step })
            for e in arranged { try body(e.event) }
        }
    }
}
