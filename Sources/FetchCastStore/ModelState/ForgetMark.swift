/// What a `forget` leaves in the model state it empties: one fleet row (``key``) holding 8
/// random bytes, new at each forget.
///
/// The fold mixes them into the tags of its sums and of the prior epoch it starts, so that the
/// epoch after a forget is never the epoch before it, even where the events left come out the
/// same in number and in sums: whatever a process keeps by epoch (decoded models, caught-up
/// schedulers, plans) is then told apart from what the forgotten events went into.
package enum ForgetMark {
    /// The row's key (the fleet's: no colon).
    package static let key = "history"

    /// A new mark, its watermark the last event's number after the forget.
    package static func record(watermark: Int64) -> ModelStateRecord {
        var random = SystemRandomNumberGenerator()
        return ModelStateRecord(key: key, watermark: watermark, state: withUnsafeBytes(of: random.next() as UInt64, Array.init))
    }
}
