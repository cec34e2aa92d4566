import Foundation
import Glibc
import Synchronization

/// Real dqlite nodes in this process, each on a free loopback port with a data directory
/// of its own under a temporary root that goes with it: for tests, which need a cluster
/// they can stop and start node by node without processes of their own.
public final class LoopbackNodes {
  public let root: String
  public private(set) var nodes: [UInt64: DqliteNode] = [:]
  public private(set) var addresses: [UInt64: String] = [:]

  /// Set, nodes advertise "NAME:port" (bound on 127.0.0.1): the address a node resolves
  /// to reach another, as pods reach each other by DNS name.
  public let hostName: String?

  public init(hostName: String? = nil) throws {
    self.hostName = hostName
    root = FileManager.default.temporaryDirectory.appendingPathComponent("dqlite-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
  }

  deinit {
    for node in nodes.values { node.stop() }
    try? FileManager.default.removeItem(atPath: root)
  }

  /// Starts node `id` (on the address it had before, if it ran before).
  @discardableResult
  public func start(_ id: UInt64) throws -> DqliteNode {
    let address = try addresses[id] ?? "\(hostName ?? "127.0.0.1"):\(Self.freePort())"
    addresses[id] = address
    let directory = "\(root)/node-\(id)"
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let port = address[address.index(after: address.lastIndex(of: ":") ?? address.startIndex)...]
    let node = try DqliteNode(
      id: id, address: address, bindAddress: "127.0.0.1:\(port)", directory: directory)
    try node.start()
    nodes[id] = node
    return node
  }

  public func stop(_ id: UInt64) {
    nodes.removeValue(forKey: id)?.stop()
  }

  public var seeds: [String] { addresses.keys.sorted().compactMap { addresses[$0] } }

  /// A free loopback port below the kernel's ephemeral range. A node that stops and
  /// starts again needs its port back, and a port from that range can be gone by then:
  /// handed to an outgoing connection as its source port, or taken by the other nodes
  /// themselves, whose reconnects to the stopped node's port can connect to themselves
  /// (TCP's simultaneous open, when the kernel picks that very port as the source). Ports
  /// outside the range are never picked as sources.
  ///
  /// A port is handed out once per process: two harnesses that picked the same port
  /// before either bound it would both bind it (libdqlite sets SO_REUSEADDR), and the
  /// second node's `listen` would fail, which leaves `dqlite_node_start` waiting forever.
  public static func freePort() throws -> Int {
    let low = ephemeralRangeStart()
    let range = 10_000..<max(10_001, low)
    for _ in 0..<200 {
      let port = Int.random(in: range)
      guard handedOut.withLock({ $0.insert(port).inserted }) else { continue }
      if canBind(port) { return port }
    }
    throw DqliteError.io("no free port below \(low)")
  }

  /// Every port `freePort` returned in this process.
  private static let handedOut = Mutex<Set<Int>>([])

  /// The first port of `ip_local_port_range` (32768 when it cannot be read).
  static func ephemeralRangeStart() -> Int {
    let text = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8)) ?? ""
    return text.split(whereSeparator: \.isWhitespace).first.flatMap { Int($0) } ?? 32_768
  }

  private static func canBind(_ port: Int) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    return withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
      }
    }
  }

  /// Retries `body` until it succeeds or `seconds` pass: elections take a moment.
  ///
  /// It waits between tries without holding a thread: tests run on Swift's cooperative
  /// pool, one thread per core, and two tests blocked in elections at once stalled every
  /// other test's awaited work for seconds (clients' calls then missed their deadlines).
  public static func eventually<T>(seconds: Double = 15, _ body: () throws -> T) async throws -> T {
    let deadline = Date().addingTimeInterval(seconds)
    while true {
      do { return try body() } catch {
        if Date() > deadline { throw error }
        try await Task.sleep(for: .milliseconds(50))
      }
    }
  }
}
