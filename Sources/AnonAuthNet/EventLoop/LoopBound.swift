/// Carries a loop-confined object across a concurrency boundary, to be touched only
/// back on its loop (the pattern of NIO's `NIOLoopBound`).
public struct LoopBound<Value: AnyObject>: @unchecked Sendable {
  // @unchecked Sendable is safe: `value` is used only inside `loop.execute`, that is on
  // the loop thread that owns it; other threads only carry the reference.
  private let value: Value
  public let loop: EventLoop

  public init(_ value: Value, loop: EventLoop) {
    self.value = value
    self.loop = loop
  }

  /// Identity of the bound object, comparable from any thread.
  public var id: ObjectIdentifier { ObjectIdentifier(value) }

  /// Runs `body` with the value on its loop.
  public func execute(_ body: @escaping @Sendable (Value) -> Void) {
    let box = UncheckedBox(value)
    loop.execute { body(box.value) }
  }
}

/// A reference moved to the thread that owns it.
public struct UncheckedBox<Value>: @unchecked Sendable {
  // @unchecked Sendable is safe: used only to hand a loop-confined value to its own loop.
  public let value: Value
  public init(_ value: Value) { self.value = value }
}
