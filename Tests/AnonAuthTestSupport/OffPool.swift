import Foundation

/// Runs `body` on a thread of its own and awaits its result. Tests that block (a read on a
/// socket, a wait for a child process, a pipe that a starting daemon has not written yet)
/// call through this: blocked on the cooperative pool (two threads on a 2-core machine),
/// they starved the very tasks the server or the other tests had to run meanwhile.
public func offPool<T: Sendable, E: Error>(_ body: @escaping @Sendable () throws(E) -> T) async throws(E) -> T
{
  let result: Result<T, E> = await withCheckedContinuation { continuation in
    Thread { continuation.resume(returning: Result { () throws(E) -> T in try body() }) }.start()
  }
  return try result.get()
}
