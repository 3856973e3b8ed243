import FetchCastCore
import Foundation

/// Why a constraints file was refused: the file, the key at fault and what to write instead.
package struct ConstraintsError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file as the user named it.
    package var file: String
    /// The key path at fault (`apps.com.example.news.network`), or empty for the whole file.
    package var key: String
    /// What is wrong and what was expected, a full sentence.
    package var message: String

    /// Creates an error.
    package init(file: String, key: String, message: String) {
        self.file = file
        self.key = key
        self.message = message
    }

    /// `FILE: key: message`.
    package var description: String { key.isEmpty ? "\(file): \(message)" : "\(file): \(key): \(message)" }
}

extension FetchConstraints {
    /// Parses a constraints file: `{"apps": {"APP": {"network": "any"|"unmetered",
    /// "charging": true|false, "battery_not_low": true|false}}}`, every key optional, `"*"` for
    /// every app. Unknown keys, wrong types and unknown values are errors.
    ///
    /// - Parameters:
    ///   - json: The file's bytes.
    ///   - file: Its name, for messages.
    ///   - system: The system rules to combine with.
    /// - Throws: ``ConstraintsError`` naming the file and key.
    package init(json: Data, file: String, system: SystemRules = .none) throws(ConstraintsError) {
        func fail(_ key: String, _ message: String) -> ConstraintsError { ConstraintsError(file: file, key: key, message: message) }
        let root: JSONValue
        do { root = try JSONDecoder().decode(JSONValue.self, from: json) } catch {
            throw fail("", "not valid JSON (expected an object such as {\"apps\": {\"*\": {\"network\": \"unmetered\"}}})")
        }
        guard case .object(let object) = root else {
            throw fail("", "the file is not a JSON object (expected {\"apps\": {…}})")
        }
        for key in object.keys.sorted() where key != "apps" {
            throw fail(key, "unknown key (expected only \"apps\")")
        }
        var apps: [String: AppConstraints] = [:]
        if let value = object["apps"] {
            guard case .object(let entries) = value else {
                throw fail("apps", "\(value) is not an object (expected app ids, or \"*\" for every app, each with an object of constraints)")
            }
            for app in entries.keys.sorted() {
                let path = "apps.\(app)"
                guard case .object(let entry) = entries[app]! else {
                    throw fail(path, "\(entries[app]!) is not an object (expected keys network, charging, battery_not_low)")
                }
                var c = AppConstraints()
                for key in entry.keys.sorted() {
                    let value = entry[key]!
                    switch (key, value) {
                    case ("network", .string(let name)) where NetworkRequirement(rawValue: name) != nil:
                        c.network = NetworkRequirement(rawValue: name)
                    case ("network", _):
                        throw fail("\(path).network", "\(value) is not a network requirement (expected \"any\" or \"unmetered\")")
                    case ("charging", .bool(let flag)):
                        c.charging = flag
                    case ("battery_not_low", .bool(let flag)):
                        c.batteryNotLow = flag
                    case ("charging", _), ("battery_not_low", _):
                        throw fail("\(path).\(key)", "\(value) is not true or false (expected true or false)")
                    default:
                        throw fail("\(path).\(key)", "unknown key (expected network, charging or battery_not_low)")
                    }
                }
                apps[app] = c
            }
        }
        self.init(apps: apps, system: system)
    }
}

/// Any JSON value, decoded strictly (a number is never a boolean), printed as JSON.
private enum JSONValue: Decodable, CustomStringConvertible {
    case null, bool(Bool), number(Double), string(String), array, object([String: JSONValue])

    init(from decoder: Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { self = .null }
        else if let v = try? c.decode(Bool.self) { self = .bool(v) }
        else if let v = try? c.decode(Double.self) { self = .number(v) }
        else if let v = try? c.decode(String.self) { self = .string(v) }
        else if let v = try? c.decode([String: JSONValue].self) { self = .object(v) }
        else { _ = try c.decode([JSONValue].self); self = .array }
    }

    var description: String {
        switch self {
        case .null: "null"
        case .bool(let v): String(v)
        case .number(let v): v == v.rounded() && abs(v) < 1e15 ? String(Int64(v)) : String(v)
        case .string(let v): "\"\(v)\""
        case .array: "an array"
        case .object: "an object"
        }
    }
}
