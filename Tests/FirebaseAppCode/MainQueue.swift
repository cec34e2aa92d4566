import Dispatch

/// Whether code runs on the main queue: what `Thread.isMainThread` tells on iOS, told in
/// a way that also holds on Linux, where the main queue is served by other threads once
/// an async `main` has parked the main thread.
public enum MainQueue {
  private static let key = DispatchSpecificKey<Bool>()

  /// Marks the main queue; call once at launch.
  public static func mark() { DispatchQueue.main.setSpecific(key: key, value: true) }

  public static var isCurrent: Bool { DispatchQueue.getSpecific(key: key) == true }
}
