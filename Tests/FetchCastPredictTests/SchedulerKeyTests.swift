import FetchCastModel
import Foundation
import Testing
import FetchCastTestSupport
@testable import FetchCastPredict

/// A saved scheduler's key hashes the sorted-key JSON of its apps and constants; the repository
/// writes the apps' part itself and encodes the constants once, and must hash the very bytes
/// `JSONEncoder` writes for the whole value (else every scheduler saved before would be missed).
struct SchedulerKeyTests {
    private struct Whole: Encodable {
        var apps: [Int32]
        var configuration: SchedulerConfiguration
        var model: ModelConfiguration
    }

    private static func reference(_ whole: Whole) throws -> UInt64 {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in try encoder.encode(whole) { hash = (hash ^ UInt64(b)) &* 0x100_0000_01b3 }
        return hash
    }

    @Test(arguments: [[], [7], [3, 1, 2], [-5, 2_147_483_647, 0], Array(0..<40)] as [[Int32]])
    func theHashIsThatOfTheWholeValuesJSON(apps: [Int32]) throws {
        let temporary = try TemporaryStore()
        let repository = ModelRepository(store: try temporary.open())
        var conditionAware = SchedulerConfiguration(budget: 6)
        conditionAware.conditionAware.toggle()
        for configuration in [SchedulerConfiguration(budget: 24), SchedulerConfiguration(budget: 6.5), conditionAware] {
            for model in [ModelConfiguration(), ModelConfiguration(tau: 900)] {
                let expected = try Self.reference(Whole(apps: apps, configuration: configuration, model: model))
                #expect(repository.storageHash(apps: apps, configuration: configuration, model: model) == expected)
                // Again, from the encoded constants kept.
                #expect(repository.storageHash(apps: apps, configuration: configuration, model: model) == expected)
            }
        }
    }
}
