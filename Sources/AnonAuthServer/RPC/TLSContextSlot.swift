import AnonAuthNet
import Synchronization

/// The server's current TLS context, swapped on SIGHUP. Each connection takes the context
/// that is current when it is accepted and keeps it: OpenSSL counts references to an
/// SSL_CTX from every SSL made from it, so a replaced context lives on exactly as long as
/// the connections that still use it.
final class TLSContextSlot: Sendable {
  private let context: Mutex<TLSContext>

  init(_ context: TLSContext) {
    self.context = Mutex(context)
  }

  var current: TLSContext { context.withLock { $0 } }

  func replace(with new: TLSContext) {
    context.withLock { $0 = new }
  }
}
