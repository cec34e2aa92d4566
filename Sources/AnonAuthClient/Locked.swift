import Foundation

/// A value behind a lock. `Synchronization.Mutex` would do, but it needs iOS 18 and
/// macOS 15; this works wherever Foundation does.
///
/// `@unchecked Sendable` is safe because `value` is only read or written inside
/// `withLock`, under `lock`, and `Value` is itself `Sendable`.
final class Locked<Value: Sendable>: @unchecked Sendable {
  private let lock = NSLock()
  private var value: Value

  init(_ value: Value) { self.value = value }

  func withLock<Result, Failure: Error>(
    _ body: (inout Value) throws(Failure) -> Result
  ) throws(Failure) -> Result {
    lock.lock()
    defer { lock.unlock() }
    return try body(&value)
  }
}
