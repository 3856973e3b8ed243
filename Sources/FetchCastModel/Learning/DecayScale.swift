import Foundation

/// Exponential forgetting at constant cost per event.
///
/// An event at time `t` is stored with weight `exp(λ (t − reference))` instead of decaying every
/// stored number as time passes; reading at time `now` multiplies by `exp(−λ (now − reference))`.
/// Ratios of stored numbers need no correction at all. When weights grow large, ``DeviceModel``
/// moves the reference forward and rescales (amortised O(1)).
struct DecayScale: Sendable, Hashable, Codable {
    /// The instant weights are relative to.
    var reference: Double
    /// The decay rate per second.
    var rate: Double

    /// The stored weight of an event at `time`.
    @inline(__always)
    func weight(at time: Double) -> Double { exp(rate * (time - reference)) }

    /// The factor turning stored numbers into present-day weights at `now`.
    @inline(__always)
    func readFactor(at now: Double) -> Double { exp(-rate * (now - reference)) }
}
