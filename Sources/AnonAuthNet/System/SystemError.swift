import CShims
import Glibc

/// A failed system call, with errno read at once after the call.
public struct SystemError: Error, CustomStringConvertible, Sendable {
  public let call: String
  public let errno: Int32

  public init(_ call: String, errno: Int32 = anonauth_errno()) {
    self.call = call
    self.errno = errno
  }

  public var description: String {
    "\(call): \(strerror(errno).map { String(cString: $0) } ?? "error") (errno \(errno))"
  }
}

/// Runs a system call, retrying on EINTR. `close` must not go through here: Linux
/// releases the descriptor even when close reports EINTR.
@discardableResult
func retryingOnInterrupt<T: FixedWidthInteger>(
  _ name: String, _ body: () -> T
) throws(SystemError) -> T {
  while true {
    let result = body()
    if result >= 0 { return result }
    let err = anonauth_errno()
    if err == EINTR { continue }
    throw SystemError(name, errno: err)
  }
}

/// Text out of a NUL-terminated C buffer.
enum CString {
  static func decode(_ buffer: [CChar]) -> String {
    String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }
}
