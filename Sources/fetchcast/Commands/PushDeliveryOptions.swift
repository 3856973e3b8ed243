import ArgumentParser
import FetchCastCore
import FetchCastModel
import FetchCastReplay

/// The push service's flags of `evaluate` and `predict` (semantics d1 of docs/evaluation.md):
/// the same delivery in the replay and in the plans served.
struct PushDeliveryOptions: ParsableArguments {
    @Option(help: ArgumentHelp("How fetches reach the device: direct (made when asked, the default), apns or fcm (a backend's silent pushes, delivered as the push service would: semantics d1 in docs/evaluation.md). evaluate: the fetches of interval, hourly and planned (writes DIR/delivery.csv); predict: each fetch with its send_at.", valueName: "service"))
    var delivery: DeliveryOptions.Kind = .direct

    @Option(parsing: .unconditional, help: ArgumentHelp("Pushes per hour per device and app the push service's token bucket refills (apns: 2, fcm: 20), 0.1 to 3600.", valueName: "n"))
    var pushPerHour: Double?

    @Option(parsing: .unconditional, help: ArgumentHelp("The token bucket's size, pushes let through back to back (apns: 1, fcm: 20), 1 to 1000.", valueName: "n"))
    var pushBurst: Int?

    @Option(parsing: .unconditional, help: ArgumentHelp("How long a held push lives before it is dropped (apns-expiration, FCM ttl; default 1h), 1s to 28d.", valueName: "duration"))
    var pushTtl: String?

    @Option(parsing: .unconditional, help: ArgumentHelp("Time between the device's keep-alives (apns, default 30m) or doze maintenance windows (fcm, default 1h), at which held pushes are tried again; 1m to 1d.", valueName: "duration"))
    var keepAlive: String?

    @Option(parsing: .unconditional, help: ArgumentHelp("fcm: time without a launch after which a device not charging dozes and normal-priority messages wait (default 1h), 1m to 1d.", valueName: "duration"))
    var dozeAfter: String?

    /// The push flags: only with a push service, each in its range.
    func validate() throws {
        if delivery == .direct {
            for (flag, given) in [("--push-per-hour", pushPerHour != nil), ("--push-burst", pushBurst != nil),
                                  ("--push-ttl", pushTtl != nil), ("--keep-alive", keepAlive != nil), ("--doze-after", dozeAfter != nil)]
            where given {
                throw ValidationError("\(flag) sets how a push service delivers; give --delivery apns or --delivery fcm too.")
            }
            return
        }
        if dozeAfter != nil && delivery != .fcm {
            throw ValidationError("--doze-after is FCM's doze; give it with --delivery fcm (APNs has no documented doze).")
        }
        if let pushPerHour { try Limits.pushesPerHour.validate(pushPerHour, flag: "--push-per-hour") }
        if let pushBurst { try Limits.pushBurst.validate(pushBurst, flag: "--push-burst") }
        for (flag, text, range) in [("--push-ttl", pushTtl, Limits.pushTTLSeconds), ("--keep-alive", keepAlive, Limits.pushIntervalSeconds),
                                    ("--doze-after", dozeAfter, Limits.pushIntervalSeconds)] {
            guard let text else { continue }
            guard let seconds = FetchCast.Evaluate.signedDuration(text) else {
                throw ValidationError("\(flag) '\(text)' is not a duration; write it as 1h, 30m or 900.")
            }
            try range.validate(seconds, flag: flag, got: text)
        }
    }

    /// The delivery the flags ask for: the service's defaults, then the flags given.
    var options: DeliveryOptions {
        var d = DeliveryOptions(kind: delivery)
        if let pushPerHour { d.perHour = pushPerHour }
        if let pushBurst { d.burst = pushBurst }
        if let t = pushTtl.flatMap(EvaluationOptions.parseDuration) { d.ttl = t }
        if let t = keepAlive.flatMap(EvaluationOptions.parseDuration) { d.keepAlive = t }
        if let t = dozeAfter.flatMap(EvaluationOptions.parseDuration) { d.dozeAfter = t }
        return d
    }
}
