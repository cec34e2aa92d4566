internal import CDqlite
import Dispatch
import Foundation
import Glibc
import Synchronization

/// The dqlite node this process embeds: it holds a replica of the store, takes part in
/// Raft elections, and serves clients (this process's store among them) on its address.
///
/// libdqlite runs the node on a thread of its own; this wrapper only creates, starts and
/// stops it, under a lock so that stop and destroy happen once.
public final class DqliteNode: Sendable {
  public let id: UInt64
  /// The address other nodes and clients use to reach this one.
  public let address: String
  /// Where it listens (`address` unless told otherwise): named when listening fails.
  public let bindAddress: String
  /// The abstract socket ("@...") it listens on behind the TLS gateway, if it does.
  public let localSocket: String?
  private let handle: Mutex<Handle>

  /// The node, and whether its thread runs: `dqlite_node_stop` joins that thread, so it
  /// must not be called for a node that never started.
  private struct Handle: ~Copyable {
    var node: OpaquePointer?
    var started = false
    /// `start` runs on another thread; the node is neither started again nor freed.
    var starting = false
  }

  /// libdqlite 1.11.1 names each node's SQLite VFS "dqlite-<serial>" from a counter it
  /// reads and increments without a lock: two nodes created at once in one process could
  /// get the same name, and SQLite then finds one VFS, so one in-memory database, for
  /// both (a test saw another node's table). Creations take turns.
  private static let creation = Mutex<Void>(())

  private static func create(
    id: UInt64, address: String, directory: String
  ) -> (code: Int32, node: OpaquePointer?) {
    creation.withLock { _ in
      var node: OpaquePointer?
      let code = dqlite_node_create(id, address, directory, &node)
      return (code, node)
    }
  }

  /// - Parameters:
  ///   - id: this node's id in the cluster, for ever (the node that bootstraps is 1).
  ///   - address: "host:port" that others reach this node on.
  ///   - bindAddress: where to listen, when it differs from `address` (0.0.0.0:port in a
  ///     container whose address others know by name; "@name", an abstract unix socket
  ///     only this process reaches, behind the cluster's TLS gateway).
  ///   - directory: where the Raft log and snapshots live; must exist.
  ///   - networkLatencyMs: one-way latency the heartbeat and election timers scale from.
  public init(
    id: UInt64, address: String, bindAddress: String? = nil, directory: String,
    networkLatencyMs: UInt32? = nil
  ) throws(DqliteError) {
    guard id > 0 else { throw .invalidRequest("node id must be positive") }
    let (created, node) = Self.create(id: id, address: address, directory: directory)
    guard created == 0, let node else {
      if let node { dqlite_node_destroy(node) }
      throw .io("dqlite_node_create failed (\(created)) for \(directory)")
    }
    // libdqlite binds here, without close-on-exec: `OpenDescriptors` sets it below, or a
    // child process started meanwhile would keep the port after the node stops.
    let bind = dqlite_node_set_bind_address(node, bindAddress ?? address)
    guard bind == 0 else {
      dqlite_node_destroy(node)
      throw .io("cannot bind \(bindAddress ?? address) (\(bind))")
    }
    if let port = try? DqliteSocket.split(bindAddress ?? address).port, let number = UInt16(port) {
      OpenDescriptors.closeOnExec(socketsOnPort: number)
    }
    // Behind the TLS gateway the node listens on an abstract socket: this process's own
    // connections to it go there directly.
    if let bindAddress, bindAddress.hasPrefix("@") {
      ClusterDialer.shared.registerLocal(address: address, socket: bindAddress)
      localSocket = bindAddress
    } else {
      localSocket = nil
    }
    if let networkLatencyMs {
      _ = dqlite_node_set_network_latency_ms(node, networkLatencyMs)
    }
    // Nodes advertise names (a pod's DNS name); libdqlite's own connect takes numbers only.
    _ = dqlite_node_set_connect_func(
      node,
      { _, address, fd in
        guard let address, let fd else { return 1 }
        guard
          let connected = try? DqliteSocket.connectedDescriptor(
            to: String(cString: address), timeoutMs: DqliteTimeouts.nodeMs)
        else { return 1 }
        fd.pointee = connected
        return 0
      }, nil)
    self.id = id
    self.address = address
    self.bindAddress = bindAddress ?? address
    handle = Mutex(Handle(node: node))
  }

  /// Starts the node's thread; from here on it answers on its address.
  ///
  /// SIGPIPE is ignored process-wide first: libraft writes to peer sockets without
  /// MSG_NOSIGNAL, so a follower whose connection to a dead leader breaks would otherwise
  /// be killed by the signal.
  ///
  /// libdqlite 1.11.1's `dqlite_node_start` waits for ever when its thread fails to listen
  /// (`ListenCheck` tells most such failures beforehand): the start runs on a thread of its
  /// own and is given up after `seconds`. A node given up on is abandoned, never freed (its
  /// thread may still use it), and the caller is expected to exit.
  public func start(within seconds: Double = DqliteTimeouts.nodeStartSeconds) throws(DqliteError) {
    signal(SIGPIPE, SIG_IGN)
    let claimed: StartingNode? = handle.withLock { handle in
      guard let node = handle.node, !handle.started, !handle.starting else { return nil }
      handle.starting = true
      return StartingNode(node: node)
    }
    guard let claimed else { throw .io("dqlite_node_start: the node was stopped or started before") }
    let outcome = StartOutcome()
    let thread = Thread {
      outcome.finish(dqlite_node_start(claimed.node))
    }
    thread.name = "dqlite-node-start"
    thread.start()
    guard let rc = outcome.wait(seconds: seconds) else {
      handle.withLock { handle in
        handle.node = nil
        handle.starting = false
      }
      throw .io(
        "dqlite_node_start did not return within \(Int(seconds)) s (the node cannot listen on \(bindAddress)?)"
      )
    }
    handle.withLock { handle in
      handle.starting = false
      handle.started = rc == 0
    }
    guard rc == 0 else { throw .io("dqlite_node_start failed (\(rc)) on \(bindAddress)") }
  }

  /// A node handed to the thread that starts it.
  ///
  /// `@unchecked Sendable`: the pointer is used by that thread alone while `starting` is
  /// set under `handle`'s lock, and nothing frees the node meanwhile (`stop` leaves a
  /// starting node alone and a node given up on is never freed).
  private struct StartingNode: @unchecked Sendable {
    let node: OpaquePointer
  }

  /// What the starting thread returned, once it did.
  private final class StartOutcome: Sendable {
    private let code = Mutex<Int32?>(nil)
    private let done = DispatchSemaphore(value: 0)

    func finish(_ rc: Int32) {
      code.withLock { $0 = rc }
      done.signal()
    }

    /// The start's return code, or nil if it has not returned within `seconds`.
    func wait(seconds: Double) -> Int32? {
      guard done.wait(timeout: .now() + seconds) == .success else { return nil }
      return code.withLock { $0 }
    }
  }

  /// Stops serving and frees the node. Idempotent; the node cannot start again.
  public func stop() {
    handle.withLock { handle in
      // A start still running on its thread keeps the node: freeing it under that thread
      // would be worse than leaving it to the process's exit.
      guard let node = handle.node, !handle.starting else { return }
      if handle.started { dqlite_node_stop(node) }
      dqlite_node_destroy(node)
      handle.node = nil
      if localSocket != nil { ClusterDialer.shared.unregisterLocal(address: address) }
    }
  }

  deinit { stop() }

  /// Whether `address` is one a node can be given or reached on: "host:port" (a name, an
  /// IPv4 address, or an IPv6 one in brackets) with a port from 1 to 65535.
  public static func isValidAddress(_ address: String) -> Bool {
    (try? DqliteSocket.split(address)) != nil
  }

  /// Forces a new membership on a node whose cluster lost its majority (see
  /// docs/replicated-store.md, Runbook). The node must be stopped everywhere; this rewrites
  /// its Raft configuration.
  public static func recover(
    id: UInt64, address: String, directory: String, members: [DqliteNodeInfo]
  ) throws(DqliteError) {
    guard case (0, let node?) = create(id: id, address: address, directory: directory) else {
      throw .io("dqlite_node_create failed for \(directory)")
    }
    defer { dqlite_node_destroy(node) }
    let addresses = members.map { strdup($0.address) }
    defer { for pointer in addresses { free(pointer) } }
    var infos = zip(members, addresses).map { member, pointer in
      dqlite_node_info_ext(
        size: UInt64(MemoryLayout<dqlite_node_info_ext>.size), id: member.id,
        address: UInt64(UInt(bitPattern: pointer)), dqlite_role: member.role.rawValue)
    }
    let rc = infos.withUnsafeMutableBufferPointer { buffer in
      dqlite_node_recover_ext(node, buffer.baseAddress, Int32(buffer.count))
    }
    guard rc == 0 else { throw .io("dqlite_node_recover_ext failed (\(rc))") }
  }
}
