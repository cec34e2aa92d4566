import CShims
import Foundation
import Glibc
import Synchronization

/// The daemon's signals: SIGTERM and SIGINT become an awaitable event, SIGHUP calls the
/// reload handler. A handler of ours writes each signal's number to a pipe, and a named
/// thread reads the pipe, so no daemon code runs in signal context and no signal is lost.
///
/// (Dispatch signal sources lost about one SIGHUP in three on a busy machine: on Linux
/// they see a signal only when the thread the kernel delivers it to blocks it, and the
/// main thread, parked by the async `main` in `sigsuspend` with nothing blocked, took it
/// and ignored it. A handler runs on whichever thread the signal lands.)
final class SignalWaiter: Sendable {
  static let observed: [Int32] = [SIGTERM, SIGINT, SIGHUP]

  private let state = Mutex<
    (
      fired: Int32?, waiter: CheckedContinuation<Int32, Never>?,
      onHangUp: (@Sendable () -> Void)?
    )
  >((nil, nil, nil))

  /// Installs the handlers at once: from here a SIGHUP during start-up is read and, with
  /// no reload handler yet, ignored, instead of killing the process.
  init() throws(SignalSetupError) {
    var fds: [Int32] = [-1, -1]
    guard anonauth_pipe_cloexec(&fds) == 0 else {
      throw SignalSetupError(description: "signals: pipe failed (errno \(anonauth_errno()))")
    }
    // The handler must never block: a full pipe (64 KiB of unread signals) drops one.
    _ = fcntl(fds[1], F_SETFL, fcntl(fds[1], F_GETFL) | O_NONBLOCK)
    let readEnd = fds[0]
    let thread = Thread { [self] in
      anonauth_set_thread_name("anonauth-signal")
      readSignals(from: readEnd)
    }
    thread.name = "anonauth-signal"
    thread.start()
    let installed = Self.observed.withUnsafeBufferPointer {
      anonauth_signals_to_pipe(fds[1], $0.baseAddress, Int32($0.count))
    }
    guard installed == 0 else {
      throw SignalSetupError(description: "signals: sigaction failed (errno \(anonauth_errno()))")
    }
  }

  /// What SIGHUP does from now on (nil: nothing).
  func onHangUp(_ handler: (@Sendable () -> Void)?) {
    state.withLock { $0.onHangUp = handler }
  }

  private func readSignals(from fd: Int32) {
    var byte: UInt8 = 0
    while true {
      let count = read(fd, &byte, 1)
      if count < 0 && anonauth_errno() == EINTR { continue }
      guard count == 1 else { return }
      let number = Int32(byte)
      if number == SIGHUP {
        state.withLock { $0.onHangUp }?()
      } else {
        fire(number)
      }
    }
  }

  private func fire(_ number: Int32) {
    let waiter = state.withLock { state -> CheckedContinuation<Int32, Never>? in
      if state.fired == nil { state.fired = number }
      defer { state.waiter = nil }
      return state.waiter
    }
    waiter?.resume(returning: number)
  }

  /// The first SIGTERM or SIGINT received (returns at once if one already was).
  func next() async -> Int32 {
    await withCheckedContinuation { continuation in
      let fired = state.withLock { state -> Int32? in
        if let fired = state.fired { return fired }
        state.waiter = continuation
        return nil
      }
      if let fired { continuation.resume(returning: fired) }
    }
  }
}

/// The pipe or a handler could not be set up: the daemon exits 1 before it serves.
struct SignalSetupError: Error, CustomStringConvertible {
  let description: String
}
