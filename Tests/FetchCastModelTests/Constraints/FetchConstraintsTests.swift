import Foundation
import Testing
import FetchCastModel
import FetchCastCore

struct FetchConstraintsTests {
    private func parse(_ text: String) throws(ConstraintsError) -> FetchConstraints {
        try FetchConstraints(json: Data(text.utf8), file: "c.json")
    }

    @Test func readsEveryKeyAndLetsAnAppReplaceTheWildcard() throws {
        let c = try parse(#"{"apps": {"*": {"network": "unmetered"}, "com.a": {"charging": true, "battery_not_low": true}, "com.b": {"network": "any"}}}"#)
        #expect(c.constraints(forApp: "com.z") == AppConstraints(network: .unmetered))
        #expect(c.constraints(forApp: "com.a") == AppConstraints(charging: true, batteryNotLow: true))
        #expect(c.constraints(forApp: "com.b") == AppConstraints(network: .any))
        #expect(try parse("{}").isEmpty)
        #expect(try parse(#"{"apps": {}}"#).constraints(forApp: "x") == .none)
    }

    @Test(arguments: [
        (#"{"apps": {"*": {"network": "metered"}}}"#, "c.json: apps.*.network: \"metered\" is not a network requirement (expected \"any\" or \"unmetered\")"),
        (#"{"apps": {"com.a": {"wifi": true}}}"#, "c.json: apps.com.a.wifi: unknown key (expected network, charging or battery_not_low)"),
        (#"{"apps": {"com.a": {"charging": 1}}}"#, "c.json: apps.com.a.charging: 1 is not true or false (expected true or false)"),
        (#"{"app": {}}"#, "c.json: app: unknown key (expected only \"apps\")"),
        (#"{"apps": []}"#, "c.json: apps: an array is not an object (expected app ids, or \"*\" for every app, each with an object of constraints)"),
        (#"{"apps": {"com.a": "unmetered"}}"#, "c.json: apps.com.a: \"unmetered\" is not an object (expected keys network, charging, battery_not_low)"),
        ("{", "c.json: not valid JSON (expected an object such as {\"apps\": {\"*\": {\"network\": \"unmetered\"}}})"),
    ])
    func namesTheFileAndKeyOfEveryMistake(text: String, message: String) {
        let error = #expect(throws: ConstraintsError.self) { _ = try parse(text) }
        #expect(error?.description == message)
    }

    @Test func resolvesForASchedulersAppsAsEachAppNameDoes() throws {
        let c = try parse(#"{"apps": {"*": {"network": "unmetered"}, "com.a": {"charging": true}, "com.b": {"network": "any"}}}"#)
        let names: [Int32: String] = [1: "com.a", 2: "com.b", 3: "com.z"]
        let rules = try #require(c.resolved(apps: [3, 1, 2]) { names[$0]! })
        let cases = [
            DeviceConditions.unknown, DeviceConditions(network: .wifi), DeviceConditions(network: .cellular, power: .charging),
            DeviceConditions(network: .offline), DeviceConditions(network: .wifi, power: .charging),
        ]
        for conditions in cases {
            for (app, name) in names {
                #expect(rules.allows(app, under: conditions) == c.allows(app: name, under: conditions), "\(name) under \(conditions)")
            }
        }
        // In app order whatever the order asked: the encoded form keys a saved scheduler.
        #expect(rules.apps.map(\.app) == [1, 2, 3])
        #expect(rules == c.resolved(apps: [1, 2, 3]) { names[$0]! })
        // Nothing refused for these apps: no constraints at all.
        #expect(try parse(#"{"apps": {"com.q": {"charging": true}}}"#).resolved(apps: [1, 2]) { names[$0]! } == nil)
        let ios = try #require(FetchConstraints(system: .ios).resolved(apps: [1]) { names[$0]! })
        #expect(!ios.allows(1, under: DeviceConditions(battery: 10)) && ios.allows(1, under: .unknown))
    }

    @Test func appliesTheConstraintsToConditionsWithUnknownsAsDocumented() {
        let unknown = DeviceConditions.unknown
        #expect(!AppConstraints(network: .unmetered).allows(unknown))  // unknown network is cellular
        #expect(AppConstraints(network: .any).allows(unknown))
        #expect(!AppConstraints(charging: true).allows(unknown))  // unknown power is battery
        #expect(AppConstraints(batteryNotLow: true).allows(unknown))  // unknown battery is not low
        #expect(SystemRules.ios.allows(unknown))  // unknown Low Power Mode is off
        #expect(!SystemRules.ios.allows(DeviceConditions(lowPower: true)))
        #expect(!SystemRules.ios.allows(DeviceConditions(battery: 19)))
        #expect(SystemRules.none.allows(DeviceConditions(battery: 0, lowPower: true)))
        #expect(!AppConstraints(network: .any).allows(DeviceConditions(network: .offline)))
    }
}
