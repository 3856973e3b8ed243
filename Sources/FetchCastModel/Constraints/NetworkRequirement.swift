import FetchCastCore

/// The network a fetch needs, as a constraints file's `network` key gives it.
public enum NetworkRequirement: String, Sendable, Hashable, Codable, CaseIterable {
    /// Any connected network (WorkManager `NetworkType.CONNECTED`,
    /// `BGProcessingTaskRequest.requiresNetworkConnectivity = true`): not offline.
    case any
    /// An unmetered network, Wi-Fi (WorkManager `NetworkType.UNMETERED`).
    case unmetered

    /// Whether the network of `conditions` meets the requirement (unknown counts as cellular).
    public func isMet(by conditions: DeviceConditions) -> Bool {
        switch self {
        case .any: conditions.isConnected
        case .unmetered: conditions.isUnmetered
        }
    }
}
