import FetchCastCore
import Testing

/// The order of one instant's events (docs/evaluation.md, "Inputs and ordering").
struct InstantOrderTests {
    /// An event as a test writes it: a name to follow it by, its instant and what it is.
    struct Event: Equatable, CustomStringConvertible {
        var name: String
        var time: Int64
        var kind: EventKind
        var everyDevice = false

        var step: InstantOrder.Step { InstantOrder.step(of: kind, everyDevice: everyDevice) }
        var description: String { name }
    }

    /// One instant with every kind, in an input order the rule changes throughout: two of each
    /// step, so that the input order within a step shows too.
    static let instant: [Event] = [
        Event(name: "fetch1", time: 5, kind: .fetch),
        Event(name: "launch1", time: 5, kind: .launch),
        Event(name: "state1", time: 5, kind: .state),
        Event(name: "publish1", time: 5, kind: .publish),
        Event(name: "everyone1", time: 5, kind: .publish, everyDevice: true),
        Event(name: "launch2", time: 5, kind: .launch),
        Event(name: "state2", time: 5, kind: .state),
        Event(name: "publish2", time: 5, kind: .publish),
        Event(name: "everyone2", time: 5, kind: .publish, everyDevice: true),
        Event(name: "fetch2", time: 5, kind: .fetch),
    ]

    /// The rule: publishes to every device, the device's publishes, `state` rows, (the looks),
    /// then launches and fetches; input order within each.
    static let arranged = [
        "everyone1", "everyone2", "publish1", "publish2", "state1", "state2", "fetch1", "launch1", "launch2", "fetch2",
    ]

    @Test func stepsOfEveryKind() {
        #expect(InstantOrder.step(of: .publish, everyDevice: true) == .publishToEveryDevice)
        #expect(InstantOrder.step(of: .publish) == .publish)
        #expect(InstantOrder.step(of: .state) == .state)
        #expect(InstantOrder.step(of: .launch) == .launchOrFetch)
        #expect(InstantOrder.step(of: .fetch) == .launchOrFetch)
        #expect(InstantOrder.Step.allCases == [.publishToEveryDevice, .publish, .state, .looks, .launchOrFetch])
        #expect(EventKind.allCases.filter(InstantOrder.precedesLooks) == [.publish, .state])
    }

    @Test func arrangeOrdersAnInstantWithEveryKind() {
        var events = Self.instant
        InstantOrder.arrange(&events, time: \.time, step: \.step)
        #expect(events.map(\.name) == Self.arranged)
    }

    @Test func arrangeMovesNothingAcrossInstants() {
        // A launch at 4, the instant, a publish at 6: each stays where its time puts it.
        var events = [Event(name: "early", time: 4, kind: .launch)] + Self.instant + [Event(name: "late", time: 6, kind: .publish)]
        InstantOrder.arrange(&events, time: \.time, step: \.step)
        #expect(events.map(\.name) == ["early"] + Self.arranged + ["late"])
    }

    @Test func sortPutsTimeFirstAndKeepsInputOrderWithinAStep() {
        var events = [Event(name: "late", time: 6, kind: .publish)] + Self.instant.reversed() + [Event(name: "early", time: 4, kind: .launch)]
        InstantOrder.sort(&events, time: \.time, step: \.step)
        // Reversed input: within each step the later-listed event now comes first.
        #expect(events.map(\.name) == [
            "early", "everyone2", "everyone1", "publish2", "publish1", "state2", "state1", "fetch2", "launch2", "launch1",
            "fetch1", "late",
        ])
    }

    @Test func forEachRunsTheLooksOnceAtTheirPlace() {
        var seen: [String] = []
        InstantOrder.forEach(in: Self.instant, step: \.step, looks: { seen.append("looks") }) { seen.append($0.name) }
        #expect(seen == ["everyone1", "everyone2", "publish1", "publish2", "state1", "state2", "looks", "fetch1", "launch1", "launch2", "fetch2"])
        // With nothing at the instant but a launch, the looks still come first; with nothing, they still run.
        seen = []
        InstantOrder.forEach(in: [Event(name: "launch", time: 5, kind: .launch)], step: \.step, looks: { seen.append("looks") }) {
            seen.append($0.name)
        }
        #expect(seen == ["looks", "launch"])
        seen = []
        InstantOrder.forEach(in: [Event](), step: \.step, looks: { seen.append("looks") }) { seen.append($0.name) }
        #expect(seen == ["looks"])
    }

    @Test func bufferArrangesAStreamOneInstantAtATime() {
        let stream = [Event(name: "early", time: 4, kind: .launch)] + Self.instant + [Event(name: "late", time: 6, kind: .publish)]
        var buffer = InstantOrder.Buffer<Event>()
        var seen: [String] = []
        for e in stream {
            buffer.add(e, time: e.time, step: e.step) { seen.append($0.name) }
            // Nothing of an instant is handed on before the instant has ended.
            #expect(!seen.contains("late"))
        }
        #expect(seen == ["early"] + Self.arranged)
        buffer.flush { seen.append($0.name) }
        #expect(seen == ["early"] + Self.arranged + ["late"])
        buffer.flush { seen.append($0.name) }
        #expect(seen.count == Self.instant.count + 2, "a flushed buffer holds nothing")
    }
}
