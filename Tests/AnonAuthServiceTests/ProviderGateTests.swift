import AnonAuthWire
import Synchronization
import Testing

@testable import AnonAuthService

/// The per-provider bound: `maxConcurrent` run, `maxWaiting` wait, the rest are refused,
/// however many arrive at once.
@Suite struct ProviderGateTests {
  final class Counts: Sendable {
    let state = Mutex<(entered: Int, refused: Int)>((0, 0))
  }

  @Test func aBurstArrivingAtOnceWaitsNoMoreThanMaxWaiting() async throws {
    let gate = ProviderGate(maxConcurrent: 1, maxWaiting: 2)
    let release = AsyncStream<Void>.makeStream()
    let counts = Counts()
    let burst = 40
    await withTaskGroup(of: Void.self) { group in
      for _ in 0..<burst {
        group.addTask {
          do {
            try await gate.run("graph.facebook.com") {
              counts.state.withLock { $0.entered += 1 }
              for await _ in release.stream { break }
            }
          } catch {
            counts.state.withLock { $0.refused += 1 }
          }
        }
      }
      // Every call has either entered or been refused, or waits: 1 runs, 2 wait.
      for _ in 0..<2000 {
        let settled = counts.state.withLock { $0.entered + $0.refused }
        if settled == burst - 2 { break }
        try? await Task.sleep(for: .milliseconds(10))
      }
      #expect(counts.state.withLock { $0.entered } == 1)
      #expect(counts.state.withLock { $0.refused } == burst - 3)
      for _ in 0..<3 { release.continuation.yield() }
      release.continuation.finish()
    }
    #expect(counts.state.withLock { $0.entered } == 3)
  }
}
