extension Auth {
  /// Runs `work` and calls `completion` with its result on the callback queue, as
  /// FirebaseAuth calls completions: asynchronously, on the main queue by default.
  func deliver<Value: Sendable>(
    _ completion: ((Value?, (any Error)?) -> Void)?, _ work: @escaping @Sendable () async throws -> Value
  ) {
    let box = Completion(call: completion)
    Task {
      let result: Result<Value, any Error>
      do {
        result = .success(try await work())
      } catch {
        result = .failure(error)
      }
      callbackQueue.async {
        switch result {
        case .success(let value): box.call?(value, nil)
        case .failure(let error): box.call?(nil, error)
        }
      }
    }
  }

  /// `deliver` for calls that return nothing.
  func deliver(_ completion: (((any Error)?) -> Void)?, _ work: @escaping @Sendable () async throws -> Void) {
    let box = VoidCompletion(call: completion)
    Task {
      var failure: (any Error)?
      do {
        try await work()
      } catch {
        failure = error
      }
      let error = failure
      callbackQueue.async { box.call?(error) }
    }
  }
}
