import FetchCastStore

extension StoreLocation {
    /// The PostgreSQL database at `url` (`fetchcast --db postgres://…`, docs/postgres.md).
    /// - Parameters:
    ///   - url: As ``PostgresLocation/init(url:environment:)`` reads it.
    ///   - environment: Where libpq's variables fill what the URL leaves out (the process's by
    ///     default).
    /// - Throws: `StoreError` naming what is wrong with the URL (never its password). Nothing
    ///   is connected yet.
    public static func postgres(
        url: String, environment: [String: String] = PostgresLocation.processEnvironment()
    ) throws(StoreError) -> StoreLocation {
        postgres(try PostgresLocation(url: url, environment: environment))
    }

    /// The PostgreSQL database at `location`.
    public static func postgres(_ location: PostgresLocation) -> StoreLocation {
        StoreLocation(storage: PostgresModelStore.serviceStorage(location), filePath: nil) { create in
            try await PostgresEventLog.open(location, create: create, upgrade: true)
        }
    }
}
