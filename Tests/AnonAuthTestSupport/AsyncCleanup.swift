/// Runs `body`, then `cleanup` whatever happened, and hands back `body`'s result or
/// error: the `defer` that an asynchronous clean-up (closing a store, shutting pools down)
/// cannot have. The harnesses open their resources, then run the test through this.
public func withAsyncCleanup<T>(
  _ body: () async throws -> T, cleanup: () async -> Void
) async throws -> T {
  do {
    let result = try await body()
    await cleanup()
    return result
  } catch {
    await cleanup()
    throw error
  }
}
