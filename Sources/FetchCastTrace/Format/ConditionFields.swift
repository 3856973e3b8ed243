import FetchCastCore
/// Reads the condition columns (`network`, `power`, `battery`, `low_power`) of a row: only a
/// `state` row may fill them, it must fill at least one, and a `state` row names no app.
enum ConditionFields {
    static func decode(_ f: RowFields, kind: EventKind) throws(RowProblem) -> ConditionChange {
        guard kind == .state else {
            let c = TraceColumn.allCases.first { $0.isCondition && f.count($0) > 0 }!
            throw RowProblem(column: f.column(c), problem: .badValue(
                column: c.name, value: RowDecoder.text(f.bytes(c)),
                expected: "nothing on a \(kind.name) event; network, power, battery and low_power belong to state events"))
        }
        if f.count(.app) > 0 {
            throw RowProblem(column: f.column(.app), problem: .badValue(
                column: "app", value: RowDecoder.text(f.bytes(.app)),
                expected: "an empty app on a state event; a state row describes the device, not an app"))
        }
        var change = ConditionChange()
        let network = f.bytes(.network)
        if network.count > 0 {
            if RowDecoder.equals(network, "wifi") { change.network = .wifi }
            else if RowDecoder.equals(network, "cellular") { change.network = .cellular }
            else if RowDecoder.equals(network, "offline") { change.network = .offline }
            else { throw bad(f, .network, "wifi, cellular, offline or nothing") }
        }
        let power = f.bytes(.power)
        if power.count > 0 {
            if RowDecoder.equals(power, "charging") { change.power = .charging }
            else if RowDecoder.equals(power, "battery") { change.power = .battery }
            else { throw bad(f, .power, "charging, battery or nothing") }
        }
        let battery = f.bytes(.battery)
        if battery.count > 0 {
            var v = 0
            for i in 0..<battery.count {
                let d = battery[i] &- 48
                guard d < 10, i < 3 else { throw bad(f, .battery, "a whole percentage from 0 to 100 or nothing") }
                v = v * 10 + Int(d)
            }
            guard v <= 100 else { throw bad(f, .battery, "a whole percentage from 0 to 100 or nothing") }
            change.battery = UInt8(v)
        }
        let lowPower = f.bytes(.lowPower)
        if lowPower.count > 0 {
            if RowDecoder.equals(lowPower, "on") { change.lowPower = true }
            else if RowDecoder.equals(lowPower, "off") { change.lowPower = false }
            else { throw bad(f, .lowPower, "on, off or nothing") }
        }
        if change.isEmpty {
            throw RowProblem(column: max(f.column(.event), 1), problem: .stateSetsNothing)
        }
        return change
    }

    private static func bad(_ f: RowFields, _ c: TraceColumn, _ expected: String) -> RowProblem {
        RowProblem(column: f.column(c), problem: .badValue(column: c.name, value: RowDecoder.text(f.bytes(c)), expected: expected))
    }
}
