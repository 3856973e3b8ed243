import FetchCastStore
import FetchCastTrace

/// Why an evaluation could not run; each message names what to fix.
public enum EvaluationError: Error, Sendable, CustomStringConvertible {
    /// A trace could not be read (bad row, gzip, header…), or a device's events go back in time.
    case trace(TraceError)
    /// The store could not be read.
    case store(String)
    /// An energy profile file is unusable.
    case energyProfile(path: String, reason: String)
    /// The `--devices` file could not be read.
    case deviceList(path: String, reason: String)
    /// A policy name nobody registered.
    case unknownPolicy(String, known: [String])
    /// An output file or the scratch spool could not be written or read.
    case output(path: String, reason: String)
    /// A policy broke the ``FetchPolicy`` contract.
    case policyContract(policy: String, device: String, reason: String)

    /// A one-line message.
    public var description: String {
        switch self {
        case .trace(let e): return e.description
        case .store(let m): return m
        case .energyProfile(let path, let reason): return "\(path): \(reason)"
        case .deviceList(let path, let reason): return "\(path): \(reason)"
        case .unknownPolicy(let name, let known):
            return "unknown policy '\(name)' (expected one of \(known.joined(separator: ", ")))"
        case .output(let path, let reason): return "\(path): \(reason)"
        case .policyContract(let policy, let device, let reason):
            return "policy \(policy) on device \(device): \(reason) (this is a bug in the policy)"
        }
    }
}

extension EvaluationError {
    /// An output that was refused or could not be written.
    init(_ error: OutputError) {
        self = .output(path: error.path, reason: error.code == nil ? error.reason : "could not write the file: \(error.reason)")
    }
}
