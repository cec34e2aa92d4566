import CShims
import Foundation
import Synchronization

/// A child process for the tests (the daemon, the CLI, Python), started with
/// `posix_spawn`. Foundation's `Process.run()` crashed inside its own memcpy in CI, three
/// times over two days, with and without a lock around every launch in the bundle; this
/// launcher copies nothing it does not own.
public final class ChildProcess: Sendable {
  /// Where a stream of the child goes.
  public enum Output: Sendable {
    /// A pipe whose read end the test gets (`stdout` / `stderr`).
    case pipe
    /// Appended to a file.
    case file(String)
    /// The test runner's own.
    case inherit
  }

  public let pid: pid_t
  /// The read ends of the child's piped streams; nil for the others.
  public let stdout: FileHandle?
  public let stderr: FileHandle?
  /// The wait status once the child has been reaped.
  private let reaped = Mutex<Int32?>(nil)

  /// Starts `executable` (a path) with `arguments` and exactly `environment`.
  public init(
    _ executable: String, _ arguments: [String], environment: [String: String],
    stdout out: Output = .pipe, stderr err: Output = .inherit
  ) throws {
    let (outRead, outWrite) = try Self.open(out)
    let (errRead, errWrite) = try Self.open(err)
    let argv = ([executable] + arguments).map { strdup($0) }
    let envp = environment.map { strdup("\($0.key)=\($0.value)") }
    defer {
      for pointer in argv + envp { free(pointer) }
      for fd in [outWrite, errWrite] where fd >= 0 { close(fd) }
    }
    var child: pid_t = 0
    let rc = anonauth_spawn(executable, argv + [nil], envp + [nil], outWrite, errWrite, &child)
    guard rc == 0 else {
      for fd in [outRead, errRead] where fd >= 0 { close(fd) }
      throw POSIXError(code: rc)
    }
    pid = child
    stdout = outRead >= 0 ? FileHandle(fileDescriptor: outRead, closeOnDealloc: true) : nil
    stderr = errRead >= 0 ? FileHandle(fileDescriptor: errRead, closeOnDealloc: true) : nil
  }

  /// (read end for the test, write end for the child), -1 where there is none. Both ends
  /// are close-on-exec: the child gets its end through dup2 alone, and no other child
  /// inherits it (a pipe left open in another child would never reach end of file).
  private static func open(_ output: Output) throws -> (Int32, Int32) {
    switch output {
    case .inherit:
      return (-1, -1)
    case .pipe:
      var fds: [Int32] = [-1, -1]
      guard anonauth_pipe_cloexec(&fds) == 0 else {
        throw POSIXError(code: errno)
      }
      return (fds[0], fds[1])
    case .file(let path):
      let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
      guard fd >= 0 else { throw POSIXError(code: errno) }
      return (-1, fd)
    }
  }

  public func signal(_ signal: Int32) {
    if isRunning { kill(pid, signal) }
  }

  /// Whether the child has not exited yet (reaps it if it has).
  public var isRunning: Bool {
    reaped.withLock { status in
      if status != nil { return false }
      var raw: Int32 = 0
      switch waitpid(pid, &raw, WNOHANG) {
      case pid:
        status = raw
        return false
      case 0: return true
      // ECHILD: `wait` reaped it and is about to record the status.
      default: return false
      }
    }
  }

  /// Waits for the child to exit: its exit code, or 128 + the signal that ended it. The
  /// wait itself runs outside the lock, so another thread can still `signal` the child
  /// meanwhile (that is how a test stops a child it is waiting for).
  @discardableResult
  public func wait() -> Int32 {
    var raw: Int32 = 0
    if let status = reaped.withLock({ $0 }) {
      raw = status
    } else {
      var result: pid_t
      repeat { result = waitpid(pid, &raw, 0) } while result < 0 && errno == EINTR
      if result == pid {
        reaped.withLock { $0 = raw }
      } else {
        // ECHILD: `isRunning` reaped it, and recorded the status under the lock it held.
        raw = reaped.withLock { $0 } ?? 0
      }
    }
    let signal = raw & 0x7f
    return signal == 0 ? (raw >> 8) & 0xff : 128 + signal
  }
}

extension POSIXError {
  /// The error `errno` (or a C function's returned code) names; EIO if it names none.
  fileprivate init(code: Int32) { self.init(POSIXErrorCode(rawValue: code) ?? .EIO) }
}
