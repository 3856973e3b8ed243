import Foundation

/// The radio tail model's parameters (rule 5 of the replay semantics).
///
/// A fetch that starts more than ``tailSeconds`` after the previous transfer ended opens a new
/// radio session and pays a promotion; every fetch transfers for ``transferSeconds``; gaps
/// inside a session and the end of every session are tail. Times in seconds, powers in watts.
public struct EnergyProfile: Sendable, Hashable, Codable {
    /// A short name (`lte`, `wifi`, or the file's own).
    public var name: String
    /// Promotion (idle → connected) time T_promo.
    public var promotionSeconds: Double
    /// Promotion power P_promo.
    public var promotionWatts: Double
    /// Transfer time of one fetch T_xfer.
    public var transferSeconds: Double
    /// Transfer power P_xfer.
    public var transferWatts: Double
    /// Tail time T_tail.
    public var tailSeconds: Double
    /// Tail power P_tail.
    public var tailWatts: Double
    /// Where the numbers come from.
    public var source: String?

    enum CodingKeys: String, CodingKey {
        case name, source
        case promotionSeconds = "t_promo_s"
        case promotionWatts = "p_promo_w"
        case transferSeconds = "t_xfer_s"
        case transferWatts = "p_xfer_w"
        case tailSeconds = "t_tail_s"
        case tailWatts = "p_tail_w"
    }

    /// Creates a profile.
    public init(
        name: String, promotionSeconds: Double, promotionWatts: Double, transferSeconds: Double,
        transferWatts: Double, tailSeconds: Double, tailWatts: Double, source: String? = nil
    ) {
        self.name = name
        self.promotionSeconds = promotionSeconds
        self.promotionWatts = promotionWatts
        self.transferSeconds = transferSeconds
        self.transferWatts = transferWatts
        self.tailSeconds = tailSeconds
        self.tailWatts = tailWatts
        self.source = source
    }

    /// The default: LTE, AT&T ARO's model after Huang et al., MobiSys 2012.
    public static let lte = EnergyProfile(
        name: "lte", promotionSeconds: 0.26, promotionWatts: 1.21, transferSeconds: 2.0,
        transferWatts: 1.2, tailSeconds: 11.5, tailWatts: 1.06,
        source: "LTE, AT&T ARO's model after Huang et al., A Close Examination of Performance and Power Characteristics of 4G LTE Networks, MobiSys 2012")

    /// Wi-Fi, from the Wi-Fi column of the same paper's power model table (see docs/evaluation.md).
    public static let wifi = EnergyProfile(
        name: "wifi", promotionSeconds: 0.0791, promotionWatts: 0.1244, transferSeconds: 2.0,
        transferWatts: 0.27, tailSeconds: 0.2381, tailWatts: 0.1193,
        source: "Wi-Fi, meant as Huang et al., MobiSys 2012, Table 3 (Wi-Fi column): T_promo 79.1 ms at 124.4 mW, tail 238.1 ms at 119.3 mW; P_xfer = beta 132.86 mW + alpha_d 137.01 mW/Mbps x 1 Mbps; T_xfer as for LTE. NOT verified against the table (recalled; see docs/evaluation.md, Energy profiles)")

    /// The built-in profiles by name.
    public static let builtIn: [String: EnergyProfile] = ["lte": .lte, "wifi": .wifi]

    /// Loads a profile: a built-in name (`lte`, `wifi`) or a JSON file with the keys
    /// `t_promo_s, p_promo_w, t_xfer_s, p_xfer_w, t_tail_s, p_tail_w` (any missing key keeps
    /// the LTE default; `name` defaults to the file name).
    ///
    /// - Parameter argument: A built-in name or a path.
    /// - Returns: The profile.
    /// - Throws: ``EvaluationError`` when the file cannot be read, is not such JSON, or holds a
    ///   negative or non-finite number.
    public static func load(_ argument: String) throws(EvaluationError) -> EnergyProfile {
        if let builtIn = builtIn[argument], !FileManager.default.fileExists(atPath: argument) { return builtIn }
        guard let data = FileManager.default.contents(atPath: argument) else {
            throw EvaluationError.energyProfile(path: argument, reason: "cannot read the file (check the path, or pass lte or wifi)")
        }
        let partial: PartialProfile
        do {
            partial = try JSONDecoder().decode(PartialProfile.self, from: data)
        } catch {
            throw EvaluationError.energyProfile(path: argument, reason: "not a JSON object of numbers t_promo_s, p_promo_w, t_xfer_s, p_xfer_w, t_tail_s, p_tail_w (\(error))")
        }
        let d = EnergyProfile.lte
        let fileName = argument.split(separator: "/").last.map(String.init) ?? argument
        let profile = EnergyProfile(
            name: partial.name ?? (fileName.hasSuffix(".json") ? String(fileName.dropLast(5)) : fileName),
            promotionSeconds: partial.t_promo_s ?? d.promotionSeconds, promotionWatts: partial.p_promo_w ?? d.promotionWatts,
            transferSeconds: partial.t_xfer_s ?? d.transferSeconds, transferWatts: partial.p_xfer_w ?? d.transferWatts,
            tailSeconds: partial.t_tail_s ?? d.tailSeconds, tailWatts: partial.p_tail_w ?? d.tailWatts,
            source: partial.source)
        for (key, v) in profile.numbers where !(v.isFinite && v >= 0) {
            throw EvaluationError.energyProfile(path: argument, reason: "\(key) is \(v) (expected a finite number ≥ 0)")
        }
        return profile
    }

    /// The six parameters by their JSON keys, in model order.
    var numbers: [(String, Double)] {
        [("t_promo_s", promotionSeconds), ("p_promo_w", promotionWatts), ("t_xfer_s", transferSeconds),
         ("p_xfer_w", transferWatts), ("t_tail_s", tailSeconds), ("p_tail_w", tailWatts)]
    }
}

private struct PartialProfile: Decodable {
    var name: String?
    var source: String?
    var t_promo_s: Double?
    var p_promo_w: Double?
    var t_xfer_s: Double?
    var p_xfer_w: Double?
    var t_tail_s: Double?
    var p_tail_w: Double?
}
