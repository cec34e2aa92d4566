import Foundation

/// The uids a state listener heard, in order, from whichever thread it was called on.
///
/// `@unchecked Sendable` is safe: `uids` is only touched under `lock`.
final class HeardUsers: @unchecked Sendable {
  private let lock = NSLock()
  private var list: [String] = []

  func append(_ uid: String) {
    lock.lock()
    defer { lock.unlock() }
    list.append(uid)
  }

  var uids: [String] {
    lock.lock()
    defer { lock.unlock() }
    return list
  }
}
