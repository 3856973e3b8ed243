extension Result where Failure == any Error {
    /// What `body` returns, or what it throws: for work that must run after an async body
    /// whether it ended or failed (a `defer` cannot await).
    package init(awaiting body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
