import FetchCastCore
import FetchCastModel
import FetchCastPredict
@testable import FetchCastServe
@testable import FetchCastStore  // the store's connection, to hold the write lock
import FetchCastTrace
import Foundation
import HTTPTypes
import Hummingbird
import Testing

/// Every route (the application on a loopback socket, Support/TestHTTP.swift): auth, bad input,
/// limits, answers.
struct RouteTests {
    typealias Client = TestClient

    /// Builds a server on a fresh store and runs `body` against it.
    func withServer(maxBody: Int = 1 << 20, _ body: @escaping @Sendable (Client, ServeFixture) async throws -> Void) async throws {
        let fixture = try ServeFixture()
        let (app, _) = try await buildApplication(configuration: try fixture.configuration(maxBody: maxBody))
        try await app.test(.live) { client in try await body(client, fixture) }
    }

    func post(_ client: Client, _ text: String, token: String = ServeFixture.ingestToken) async throws -> TestResponse {
        try await client.execute(uri: "/v1/events", method: .post, headers: ServeFixture.bearer(token), body: ServeFixture.buffer(text))
    }

    @Test func healthAndReadinessNeedNoToken() async throws {
        try await withServer { client, _ in
            #expect(try await client.execute(uri: "/healthz", method: .get).status == .ok)
            #expect(try await client.execute(uri: "/readyz", method: .get).status == .ok)
            let doc = try await client.execute(uri: "/openapi.json", method: .get)
            #expect(doc.status == .ok)
            #expect(doc.text.contains("\"openapi\""))
        }
    }

    @Test(arguments: [
        ("GET", "/v1/devices"), ("GET", "/v1/devices/dev-1/plan"), ("GET", "/v1/devices/dev-1/model"),
        ("GET", "/v1/plans"), ("GET", "/metrics"), ("POST", "/v1/events"),
    ])
    func withoutAValidTokenIs401(method: String, path: String) async throws {
        try await withServer { client, _ in
            let m = HTTPRequest.Method(method)!
            let none = try await client.execute(uri: path, method: m, body: ServeFixture.buffer("x"))
            #expect(none.status == .unauthorized)
            #expect(none.headers[.wwwAuthenticate]?.hasPrefix("Bearer") == true)
            #expect(try none.json(ErrorBody.self).error.contains("bearer token"))
            let wrong = try await client.execute(uri: path, method: m, headers: ServeFixture.bearer("not-a-token"), body: ServeFixture.buffer("x"))
            #expect(wrong.status == .unauthorized)
        }
    }

    @Test func aTokenWithoutTheScopeIs403() async throws {
        try await withServer { client, _ in
            let readIngests = try await post(client, ServeFixture.trace(), token: ServeFixture.readToken)
            #expect(readIngests.status == .forbidden)
            #expect(try readIngests.json(ErrorBody.self).error.contains("needs ingest"))
            let ingestReads = try await client.execute(uri: "/v1/devices", method: .get, headers: ServeFixture.bearer(ServeFixture.ingestToken))
            #expect(ingestReads.status == .forbidden)
            let ingestMetrics = try await client.execute(uri: "/metrics", method: .get, headers: ServeFixture.bearer(ServeFixture.ingestToken))
            #expect(ingestMetrics.status == .forbidden)
            let admin = try await client.execute(uri: "/v1/devices", method: .get, headers: ServeFixture.bearer(ServeFixture.adminToken))
            #expect(admin.status == .ok)
        }
    }

    @Test func ingestIsIdempotentAndReadYourWrites() async throws {
        try await withServer { client, fixture in
            let trace = ServeFixture.trace()
            let first = try await post(client, trace)
            #expect(first.status == .ok)
            let outcome = try first.json(IngestBody.self)
            #expect(outcome.events == Int64(trace.split(separator: "\n").count - 1))
            #expect(!outcome.duplicate)
            #expect(outcome.file == SHA256.hex(of: Array(trace.utf8)))
            let again = try await post(client, trace)
            #expect(again.status == .ok)
            #expect(try again.json(IngestBody.self).duplicate)
            #expect(try again.json(IngestBody.self).events == 0)

            let plan = try await client.execute(uri: "/v1/devices/dev-1/plan?count=3", method: .get, headers: ServeFixture.bearer(ServeFixture.readToken))
            #expect(plan.status == .ok)
            let body = try plan.json(PlanBody.self)
            #expect(!body.fetches.isEmpty && body.fetches.count <= 3)
            #expect(body.at_unix == ServeFixture.now)
            #expect(body.fetches.allSatisfy { $0.device == "dev-1" && $0.fetch_at_unix >= ServeFixture.now })

            // One file in the store, named after the request.
            let files = try Store(path: fixture.database, create: false).files()
            #expect(files.count == 1)
            #expect(files.first?.name == "POST /v1/events (writer)")
        }
    }

    @Test func aPlanDoesNotWaitForAWriterHoldingTheLock() async throws {
        try await withServer { client, fixture in
            let read = ServeFixture.bearer(ServeFixture.readToken)
            #expect(try await post(client, ServeFixture.trace()).status == .ok)
            #expect(try await client.execute(uri: "/v1/devices/dev-1/plan", method: .get, headers: read).status == .ok)
            // Another writer (an ingest in progress) holds the write lock: plans still answer.
            let writer = try Store(path: fixture.database, create: false)
            try writer.connection.execute("BEGIN IMMEDIATE")
            defer { try? writer.connection.execute("ROLLBACK") }
            let started = Date()
            #expect(try await client.execute(uri: "/v1/devices/dev-2/plan", method: .get, headers: read).status == .ok)
            #expect(try await client.execute(uri: "/v1/devices?limit=5", method: .get, headers: read).status == .ok)
            // A plan that waited for the lock would wait the store's busy timeout (600 s), then fail.
            #expect(Date().timeIntervalSince(started) < 120)
        }
    }

    @Test func aBadBodyIs400WithLineAndColumnAndStoresNothing() async throws {
        try await withServer { client, fixture in
            let bad = "time,device,app,event\n2013-11-11T08:00:00Z,dev-1,com.example.news,launch\n2013-11-11T08:05:00Z,dev-1,com.example.news,jump\n"
            let response = try await post(client, bad)
            #expect(response.status == .badRequest)
            let error = try response.json(ErrorBody.self)
            #expect(error.line == 3)
            #expect((error.column ?? 0) > 0)
            #expect(error.error.contains("jump"))
            let devices = try await client.execute(uri: "/v1/devices", method: .get, headers: ServeFixture.bearer(ServeFixture.readToken))
            #expect(try devices.json(DeviceListBody.self).devices.isEmpty)
            #expect(try Store(path: fixture.database, create: false).files().isEmpty)
            let empty = try await post(client, "")
            #expect(empty.status == .badRequest)
        }
    }

    @Test func aBodyOverTheLimitIs413AndStoresNothing() async throws {
        try await withServer(maxBody: 1000) { client, fixture in
            let trace = ServeFixture.trace()
            #expect(trace.utf8.count > 1000)
            let response = try await post(client, trace)
            #expect(response.status == .contentTooLarge)
            #expect(try response.json(ErrorBody.self).error.contains("--max-body"))
            #expect(try Store(path: fixture.database, create: false).files().isEmpty)
        }
    }

    @Test func devicesArePaginatedById() async throws {
        try await withServer { client, _ in
            #expect(try await post(client, ServeFixture.trace(devices: ["c", "a", "b"], days: 2)).status == .ok)
            let read = ServeFixture.bearer(ServeFixture.readToken)
            let first = try await client.execute(uri: "/v1/devices?limit=2", method: .get, headers: read).json(DeviceListBody.self)
            #expect(first.devices.map(\.device) == ["a", "b"])
            #expect(first.next == "b")
            #expect(first.devices[0].events == 2 * 3 * 2)
            #expect(first.devices[0].first_event == "2013-11-11T08:01:00Z")
            let second = try await client.execute(uri: "/v1/devices?limit=2&after=b", method: .get, headers: read).json(DeviceListBody.self)
            #expect(second.devices.map(\.device) == ["c"])
            #expect(second.next == nil)
        }
    }

    @Test func stateRowsPostedLaterAreSeenByTheNextPlan() async throws {
        try await withServer { client, fixture in
            #expect(try await post(client, ServeFixture.trace()).status == .ok)
            let at = "2013-11-24T20:00:01Z"
            let uri = "/v1/devices/dev-1/plan?at=\(at)&count=20"
            let read = ServeFixture.bearer(ServeFixture.readToken)
            let before = try await client.execute(uri: uri, method: .get, headers: read)
            #expect(before.status == .ok)
            let unknown = try before.json(PlanBody.self).fetches
            // dev-1 on Wi-Fi from 19:00 to 07:00 every day of the trace, on cellular otherwise:
            // at 20:00 the bar of a wakeup is lower (0.8 × 0.8 of it, as it usually leaves
            // Wi-Fi… only in the morning: 0.8) than on an unknown network (1.15).
            var rows = ["time,device,app,event,result,bytes,duration_ms,network,power,battery,low_power"]
            for day in 0..<14 {
                let d = 1_384_128_000 + day * 86_400  // 2013-11-11T00:00:00Z
                rows.append("\(d + 7 * 3600),dev-1,,state,,,,cellular,battery,,")
                rows.append("\(d + 19 * 3600),dev-1,,state,,,,wifi,battery,,")
            }
            #expect(try await post(client, rows.joined(separator: "\n") + "\n").status == .ok)
            let after = try await client.execute(uri: uri, method: .get, headers: read)
            #expect(after.status == .ok)
            let served = try after.json(PlanBody.self).fetches
            #expect(served.count >= unknown.count && !served.isEmpty, "\(unknown.count) fetches before, \(served.count) after")
            let store = try Store(path: fixture.database, create: false)
            let snapshot = try await ModelRepository(store: store).refresh(devices: ["dev-1"])
            await #expect(try snapshot.conditions(of: try #require(snapshot.device(named: "dev-1")), at: Timestamp.parseArgument(at)!).network == .wifi)
            let request = PredictionRequest(device: "dev-1", at: Timestamp.parseArgument(at), count: 20)
            let expected = try await Predictor.predict(request, snapshot: snapshot)
            #expect(served.map(\.reason) == expected.map(\.reason))
            #expect(served.map(\.fetch_at) == expected.map(\.fetchAt))
        }
    }

    @Test func thePlanIsWhatThePredictorAnswers() async throws {
        try await withServer { client, fixture in
            #expect(try await post(client, ServeFixture.trace()).status == .ok)
            let at = "2013-11-24T14:01:01+01:00"
            let response = try await client.execute(
                uri: "/v1/devices/dev-2/plan?at=\(at.replacingOccurrences(of: "+", with: "%2B"))&count=5&budget=12&app=com.example.mail",
                method: .get, headers: ServeFixture.bearer(ServeFixture.readToken))
            #expect(response.status == .ok)
            let served = try response.json(PlanBody.self).fetches
            // The library call `fetchcast predict` makes, on the same store.
            let store = try Store(path: fixture.database, create: false)
            let request = PredictionRequest(device: "dev-2", app: "com.example.mail", at: Timestamp.parseArgument(at), count: 5, budget: 12)
            let expected = try await Predictor.predict(request, snapshot: ModelRepository(store: store).refresh(devices: ["dev-2"]))
            #expect(!expected.isEmpty)
            #expect(served.map(\.fetch_at) == expected.map(\.fetchAt))
            #expect(served.map(\.reason) == expected.map(\.reason))
            #expect(served.map(\.launch_probability) == expected.map(\.launchProbability))
            #expect(served.map(\.new_data_probability) == expected.map(\.newDataProbability))
        }
    }

    /// `?delivery=apns`: the plan `predict --delivery apns` answers, `send_at` and the pushes
    /// left included; without it, no push field at all.
    @Test func aPlanForAPushServiceIsWhatThePredictorAnswers() async throws {
        try await withServer { client, fixture in
            #expect(try await post(client, ServeFixture.trace()).status == .ok)
            let at = "2013-11-24T14:01:01Z"
            let read = ServeFixture.bearer(ServeFixture.readToken)
            let response = try await client.execute(uri: "/v1/devices/dev-2/plan?at=\(at)&count=20&delivery=apns", method: .get, headers: read)
            #expect(response.status == .ok)
            let served = try response.json(PlanBody.self).fetches
            let store = try Store(path: fixture.database, create: false)
            var request = PredictionRequest(device: "dev-2", at: Timestamp.parseArgument(at), count: 20)
            request.delivery = DeliveryOptions(kind: .apns)
            let expected = try await Predictor.predict(request, snapshot: ModelRepository(store: store).refresh(devices: ["dev-2"]))
            #expect(!expected.isEmpty && expected.allSatisfy { $0.sendAt != nil && $0.pushesLeftThisHour != nil })
            #expect(served.map(\.fetch_at) == expected.map(\.fetchAt))
            #expect(served.map(\.send_at) == expected.map(\.sendAt))
            #expect(served.map(\.pushes_left_this_hour) == expected.map(\.pushesLeftThisHour))
            let plain = try await client.execute(uri: "/v1/devices/dev-2/plan?at=\(at)&count=20", method: .get, headers: read)
            #expect(try plain.json(PlanBody.self).fetches.allSatisfy { $0.send_at == nil && $0.pushes_left_this_hour == nil })
        }
    }

    @Test(arguments: [
        ("/v1/devices/dev-1/plan?delivery=webpush", "delivery"),
        ("/v1/devices/dev-1/plan?count=0", "count"), ("/v1/devices/dev-1/plan?budget=abc", "budget"),
        ("/v1/devices/dev-1/plan?at=yesterday", "at"), ("/v1/devices/dev-1/plan?not_before=x", "not_before"),
        ("/v1/devices?limit=-1", "limit"), ("/v1/plans?from=x", "from"), ("/v1/plans?from=0&to=100000", "to"),
        ("/v1/devices/dev%00x/plan", "device"), ("/v1/devices/%FF%FE/plan", "device"),
    ])
    func aBadParameterIs400NamingIt(uri: String, parameter: String) async throws {
        try await withServer { client, _ in
            let response = try await client.execute(uri: uri, method: .get, headers: ServeFixture.bearer(ServeFixture.readToken))
            #expect(response.status == .badRequest)
            #expect(try response.json(ErrorBody.self).error.contains(parameter))
        }
    }

    /// The service refuses what `fetchcast predict` refuses, in the same words (``Limits``):
    /// a budget past a fetch a minute is a 400, not a trap in the planner.
    @Test(arguments: [
        ("/v1/devices/dev-1/plan?budget=1e19", "budget must be between 1 and 1440, fetches a day (at most one a minute) (got 1e19)"),
        ("/v1/devices/dev-1/plan?budget=1441", "budget must be between 1 and 1440, fetches a day (at most one a minute) (got 1441)"),
        ("/v1/devices/dev-1/plan?count=-1", "count must be between 1 and 1000 (got -1)"),
        ("/v1/devices/dev-1/plan?horizon=169", "horizon must be between 1 and 168, hours (an hour to a week) (got 169)"),
        ("/v1/plans?budget=inf", "budget must be between 1 and 1440, fetches a day (at most one a minute) (got inf)"),
    ])
    func aParameterOutsideItsRangeIs400InTheCLIsWords(uri: String, message: String) async throws {
        try await withServer { client, _ in
            let response = try await client.execute(uri: uri, method: .get, headers: ServeFixture.bearer(ServeFixture.readToken))
            #expect(response.status == .badRequest)
            #expect(try response.json(ErrorBody.self).error == message)
        }
    }

    @Test func unknownDevicesAndRoutesAre404() async throws {
        try await withServer { client, _ in
            #expect(try await post(client, ServeFixture.trace(days: 2)).status == .ok)
            let read = ServeFixture.bearer(ServeFixture.readToken)
            let device = try await client.execute(uri: "/v1/devices/nobody/plan", method: .get, headers: read)
            #expect(device.status == .notFound)
            #expect(try device.json(ErrorBody.self).error.contains("nobody"))
            #expect(try await client.execute(uri: "/v1/devices/nobody/model", method: .get, headers: read).status == .notFound)
            #expect(try await client.execute(uri: "/v1/devices/dev-1/plan?app=nothing", method: .get, headers: read).status == .notFound)
            let route = try await client.execute(uri: "/v2/nothing", method: .get, headers: read)
            #expect(route.status == .notFound)
            #expect(try route.json(ErrorBody.self).error.contains("no such route"))
        }
    }

    @Test func oddIdsRoundTrip() async throws {
        let ids = ["quote'\"d", "slash/ed", "emoji-📱-✓", "semi;colon -- DROP TABLE devices", String(repeating: "x", count: 10_000)]
        try await withServer { client, _ in
            #expect(try await post(client, ServeFixture.trace(devices: ids, days: 2)).status == .ok)
            let read = ServeFixture.bearer(ServeFixture.readToken)
            for id in ids {
                let path = id.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
                let plan = try await client.execute(uri: "/v1/devices/\(path)/plan?at=2013-11-12", method: .get, headers: read)
                #expect(plan.status == .ok, "\(id.prefix(20))")
                #expect(try plan.json(PlanBody.self).device == id)
                #expect(try plan.json(PlanBody.self).fetches.allSatisfy { $0.device == id })
                let model = try await client.execute(uri: "/v1/devices/\(path)/model", method: .get, headers: read)
                #expect(model.status == .ok)
            }
            let listed = try await client.execute(uri: "/v1/devices?limit=1000", method: .get, headers: read).json(DeviceListBody.self)
            #expect(Set(listed.devices.map(\.device)) == Set(ids))
            let tooLong = String(repeating: "y", count: 10_241)
            #expect(try await client.execute(uri: "/v1/devices/\(tooLong)/plan", method: .get, headers: read).status == .badRequest)
        }
    }

    @Test func theSweepListsEveryDeviceInTheWindow() async throws {
        try await withServer { client, _ in
            #expect(try await post(client, ServeFixture.trace(devices: ["a", "b", "c"], spacing: 0)).status == .ok)
            let from = ServeFixture.now, to = ServeFixture.now + 86_400
            let response = try await client.execute(
                uri: "/v1/plans?from=\(Int(from))&to=\(Int(to))&budget=12", method: .get, headers: ServeFixture.bearer(ServeFixture.readToken))
            #expect(response.status == .ok)
            #expect(response.headers[.contentType] == "application/x-ndjson")
            let lines = response.text.split(separator: "\n").map { try! JSONDecoder().decode(PlanBody.Fetch.self, from: Data($0.utf8)) }
            #expect(Set(lines.map(\.device)) == ["a", "b", "c"])
            #expect(lines.allSatisfy { $0.fetch_at_unix >= from && $0.fetch_at_unix < to })
        }
    }

    /// `delivery=apns` on the sweep: each device's fetches in the window are those of its plan
    /// through APNs (`send_at` included), and the next page's link keeps the delivery.
    @Test func theSweepThroughAPushServiceIsEachDevicesPlanThroughIt() async throws {
        try await withServer { client, _ in
            #expect(try await post(client, ServeFixture.trace(devices: ["a", "b", "c"], spacing: 0)).status == .ok)
            let from = ServeFixture.now, to = ServeFixture.now + 86_400
            let read = ServeFixture.bearer(ServeFixture.readToken)
            let response = try await client.execute(
                uri: "/v1/plans?from=\(Int(from))&to=\(Int(to))&delivery=apns&limit=2", method: .get, headers: read)
            #expect(response.status == .ok)
            #expect(response.headers[HTTPField.Name("Link")!]?.contains("&delivery=apns&") == true)
            let swept = response.text.split(separator: "\n").map { try! JSONDecoder().decode(PlanBody.Fetch.self, from: Data($0.utf8)) }
            #expect(Set(swept.map(\.device)) == ["a", "b"] && swept.allSatisfy { $0.send_at != nil })
            for device in ["a", "b"] {
                let plan = try await client.execute(
                    uri: "/v1/devices/\(device)/plan?at=\(Int(from))&count=1000&delivery=apns", method: .get, headers: read)
                let expected = try plan.json(PlanBody.self).fetches.filter { $0.fetch_at_unix < to }
                #expect(swept.filter { $0.device == device } == expected)
            }
        }
    }

    @Test func theModelIsTheGridQuietHoursAndPairs() async throws {
        try await withServer { client, _ in
            #expect(try await post(client, ServeFixture.trace()).status == .ok)
            let response = try await client.execute(uri: "/v1/devices/dev-1/model?app=com.example.news", method: .get, headers: ServeFixture.bearer(ServeFixture.readToken))
            #expect(response.status == .ok)
            let model = try response.json(ModelDocument.self)
            #expect(model.sessionsPerHour.count == 168)
            #expect(model.app == "com.example.news")
            // Launches at 08:00, 13:00 and 20:00 every day: Monday 08:00 beats Monday 03:00.
            #expect(model.sessionsPerHour[8] > model.sessionsPerHour[3])
        }
    }

    @Test func metricsCountRequestsAndEvents() async throws {
        try await withServer { client, _ in
            #expect(try await post(client, ServeFixture.trace(days: 1)).status == .ok)
            #expect(try await client.execute(uri: "/v1/devices", method: .get).status == .unauthorized)
            let metrics = try await client.execute(uri: "/metrics", method: .get, headers: ServeFixture.bearer(ServeFixture.readToken))
            #expect(metrics.status == .ok)
            #expect(metrics.text.contains("fetchcast_events_ingested_total"))
            #expect(metrics.text.contains("fetchcast_store_bytes"))
            #expect(metrics.text.contains("fetchcast_plans_answered_ahead_total"))
            #expect(metrics.text.contains("fetchcast_plans_from_memory_total 0"), "an SQLite server keeps no plans in memory")
            #expect(metrics.text.contains("fetchcast_plan_checks_total 0"))
            #expect(metrics.text.contains("fetchcast_plans_preloaded_total 0"), "nor loads any")
            #expect(metrics.text.contains("http_route=\"/v1/events\""))
            #expect(metrics.text.contains("http_server_request_duration_bucket"))
            // Error answers are counted and timed too (the registry is the process's: other tests count as well).
            let timed401 = metrics.text.split(separator: "\n").first {
                $0.hasPrefix("http_server_request_duration_count{http_route=\"/v1/devices\",http_request_method=\"GET\",http_response_status_code=\"401\"}")
            }
            #expect(timed401.flatMap { Int($0.split(separator: " ").last ?? "") }.map { $0 >= 1 } == true)
        }
    }

    @Test func everyRouteIsInTheOpenAPIDocument() async throws {
        let fixture = try ServeFixture()
        let (_, routes) = try await buildApplication(configuration: try fixture.configuration())
        let document = try JSONSerialization.jsonObject(with: Data(PackageResources.openapi_json)) as! [String: Any]
        #expect(document["openapi"] as? String == "3.1.0")
        let paths = document["paths"] as! [String: [String: Any]]
        #expect(routes.routes.count == 9)
        for route in routes.routes {
            let parts = route.split(separator: " ", maxSplits: 1)
            let (method, path) = (parts[0].lowercased(), String(parts[1]))
            #expect(paths[path]?[method] != nil, "\(route) is not in openapi.json")
        }
        #expect(paths.values.reduce(0) { $0 + $1.count } == routes.routes.count, "openapi.json lists a route the server lacks")
    }
}
