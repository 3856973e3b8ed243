import FetchCastCore
import Foundation

/// One fetch in a plan: when, for which app, and why.
public struct ScheduledFetch: Sendable, Hashable {
    /// The app.
    public var app: Int32
    /// When to fetch (Unix seconds).
    public var time: Double
    /// P(a session of the app starts within τ after `time`).
    public var launchProbability: Double
    /// P(the fetch finds new data).
    public var newDataProbability: Double
    /// Why.
    public var reason: FetchReason
}
