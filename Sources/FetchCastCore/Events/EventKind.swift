/// What happened at an instant in a trace.
public enum EventKind: UInt8, Sendable, Hashable, Codable, CaseIterable {
    /// The user opened the app (brought it to the foreground).
    case launch = 0
    /// The app fetched content in the background; carries a ``FetchResult``.
    case fetch = 1
    /// New content for the app appeared at its origin (an empty device means every device).
    case publish = 2
    /// The device's conditions changed (network, power, battery, Low Power Mode); the app is
    /// empty and the row carries a ``ConditionChange``.
    case state = 3

    /// The name used in trace files and in the store's `events` view.
    public var name: String {
        switch self {
        case .launch: "launch"
        case .fetch: "fetch"
        case .publish: "publish"
        case .state: "state"
        }
    }

    /// Parses a trace-file name (`launch`, `fetch`, `publish`, `state`); `nil` for anything else.
    public init?(name: String) {
        switch name {
        case "launch": self = .launch
        case "fetch": self = .fetch
        case "publish": self = .publish
        case "state": self = .state
        default: return nil
        }
    }
}

/// The outcome of a background fetch, named as iOS names `UIBackgroundFetchResult`.
public enum FetchResult: UInt8, Sendable, Hashable, Codable, CaseIterable {
    /// Something new had appeared since the last refresh.
    case newData = 0
    /// Nothing new had appeared since the last refresh.
    case noData = 1
    /// The fetch did not complete; says nothing about content.
    case failed = 2

    /// The name used in trace files and in the store's `events` view.
    public var name: String {
        switch self {
        case .newData: "newData"
        case .noData: "noData"
        case .failed: "failed"
        }
    }

    /// Parses a trace-file name (`newData`, `noData`, `failed`); `nil` for anything else.
    public init?(name: String) {
        switch name {
        case "newData": self = .newData
        case "noData": self = .noData
        case "failed": self = .failed
        default: return nil
        }
    }
}
