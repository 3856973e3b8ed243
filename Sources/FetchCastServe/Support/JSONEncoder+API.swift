import Foundation

extension JSONEncoder {
    /// Sorted keys, unescaped slashes: the encoding `fetchcast predict --format json` uses.
    static var api: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}
