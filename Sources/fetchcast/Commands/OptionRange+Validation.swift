import ArgumentParser
import FetchCastCore
import FetchCastTrace

extension OptionRange {
    /// Refuses `value` outside the range as a usage error (exit 64) naming `flag`, in the words
    /// `fetchcast serve` answers a query parameter outside it with.
    func validate(_ value: Value, flag: String, got: String? = nil) throws {
        guard contains(value) else { throw ValidationError(message(name: flag, got: got ?? Self.text(value)) + ".") }
    }
}
