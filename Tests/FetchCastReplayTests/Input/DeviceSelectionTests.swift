import FetchCastCore
import FetchCastTrace
import Foundation
import Testing
@testable import FetchCastReplay
import FetchCastTestSupport

/// `--devices` and `--prior-devices` select devices by their ids' bytes, as a trace and the store
/// name them: "café" written with U+00E9 and with "e" + U+0301 are two devices, which Swift's
/// `String` equality (canonical equivalence) would take for one.
struct DeviceSelectionTests {
    static let composed = "caf\u{E9}"
    static let decomposed = "cafe\u{301}"

    /// Two devices whose ids differ only in their normalisation, three launches of one and one
    /// of the other.
    static let rows = [
        "2024-01-01T10:00:00Z,\(composed),x,launch,,,",
        "2024-01-01T10:10:00Z,\(decomposed),x,launch,,,",
        "2024-01-01T11:00:00Z,\(composed),x,launch,,,",
        "2024-01-01T12:00:00Z,\(composed),x,launch,,,",
    ]

    @Test func theIdsAreTwoDevicesThatStringEqualityWouldMerge() {
        #expect(Self.composed == Self.decomposed)  // what a Set<String> would go by
        let ids: DeviceIDs = [Self.composed]
        #expect(ids.contains(Self.composed))
        #expect(!ids.contains(Self.decomposed))
        #expect(DeviceIDs([Self.composed, Self.decomposed]).count == 2)
        #expect(Array(DeviceIDs(["b", "a", "b"])) == ["a", "b"])
    }

    @Test func aTraceAndTheStoreSelectTheSameOneDevice() throws {
        let temp = try TemporaryStore()
        let path = try temp.write("two.csv", ([TemporaryStore.header] + Self.rows).joined(separator: "\n") + "\n")
        let store = try temp.open()
        try temp.ingest(Self.rows, into: store)
        for ids in [[Self.composed], [Self.decomposed]] {
            var options = EvaluationOptions(policies: ["none"], threads: 1)
            options.devices = DeviceIDs(ids)
            for input in [EvaluationInput.files([path]), .store(store)] {
                let e = try Evaluator.evaluate(input, options: options)
                #expect(e.devices.map { Array($0.device!.utf8) } == [Array(ids[0].utf8)])
                #expect(e.row("none").launches == (ids[0].utf8.count == Self.composed.utf8.count ? 3 : 1))
            }
        }
    }

    @Test func aDeviceListKeepsEachLinesBytes() throws {
        let folder = try TemporaryDirectory(prefix: "fetchcast-device-list")
        let path = try folder.write("list.txt", "# held out\r\n\(Self.composed)\r\n  \(Self.decomposed)  \n\n")
        let ids = try EvaluationOptions.loadDeviceList(path)
        #expect(ids.count == 2)
        #expect(ids.contains(Self.composed) && ids.contains(Self.decomposed))
    }

    @Test func aDeviceListThatIsNotUTF8NamesItsLine() throws {
        let folder = try TemporaryDirectory(prefix: "fetchcast-device-list")
        let path = try folder.write("list.txt", bytes: Array("d1\n".utf8) + [0x64, 0xFF, 0x0A])
        #expect {
            _ = try EvaluationOptions.loadDeviceList(path)
        } throws: { error in
            "\(error)" == "\(path): line 2 is not valid UTF-8 (save the list as UTF-8, one device id per line)"
        }
    }

    @Test func leaveOneOutKeepsTheTwoDevicesApart() throws {
        let folder = try TemporaryDirectory(prefix: "fetchcast-device-list")
        let path = try folder.write("two.csv", ([TemporaryStore.header] + Self.rows).joined(separator: "\n") + "\n")
        let population = try PriorBuilder.population(traces: [path], devices: nil, tau: 1800)
        #expect(population.contributions.count == 2)
        #expect(population.overlap(with: [Self.composed, Self.decomposed]) == 2)
        #expect(population.overlap(with: [Self.decomposed]) == 1)
        let only = try PriorBuilder.population(traces: [path], devices: [Self.decomposed], tau: 1800)
        #expect(only.contributions.keys.map { $0 } == [Array(Self.decomposed.utf8)])
    }
}
