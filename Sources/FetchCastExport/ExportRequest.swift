/// What to export: a table kind, filters and the planning parameters of `predictions`.
public struct ExportRequest: Sendable, Hashable {
    /// The table.
    public var kind: ExportKind
    /// Only this device (by name); every device when `nil`. For `events`, `""` selects
    /// publishes to every device.
    public var device: String?
    /// Only rows whose `app` column is this app; every app when `nil`.
    public var app: String?
    /// `events`: only events at or after this instant; `predictions`: the window's start
    /// (default: each device's last event). Unix seconds.
    public var from: Double?
    /// `events`: only events before this instant; `predictions`: the window's end (default:
    /// 24 hours after its start). Unix seconds.
    public var to: Double?
    /// `model` and `cousage`: only the device's this many apps with the most sessions (every
    /// app when `nil`); `predictions`: the apps planned for (5 when `nil`, as `predict`).
    public var topApps: Int?
    /// `predictions`: fetches per device per local day.
    public var budget: Double
    /// CSV or JSON Lines.
    public var format: ExportFormat

    /// Creates a request.
    public init(kind: ExportKind, device: String? = nil, app: String? = nil, from: Double? = nil, to: Double? = nil,
                topApps: Int? = nil, budget: Double = 24, format: ExportFormat = .csv) {
        self.kind = kind
        self.device = device
        self.app = app
        self.from = from
        self.to = to
        self.topApps = topApps
        self.budget = budget
        self.format = format
    }
}
