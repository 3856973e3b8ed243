/// Why the service could not answer.
public enum ServiceError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No device of that id in the store (ids are case-sensitive).
    case unknownDevice(String)
    /// No app of that id in the store (ids are case-sensitive).
    case unknownApp(String)

    /// A sentence saying what to fix.
    public var description: String {
        switch self {
        case .unknownDevice(let d): return "no device '\(d)' in the store (device ids are case-sensitive; GET /v1/devices lists them)"
        case .unknownApp(let a): return "no app '\(a)' in the store (app ids are case-sensitive)"
        }
    }
}
