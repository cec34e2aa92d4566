import CShims
import Foundation
import Glibc
import Synchronization

/// One thread running `epoll_wait`: it owns its registrations and timers, and is woken
/// through an eventfd when another thread hands it work with `execute`.
///
/// Socket I/O and OpenSSL calls happen here, never on Swift's cooperative pool.
public final class EventLoop: @unchecked Sendable {
  // @unchecked Sendable is safe: `handlers`, `timers`, `stopped` and `scratch` are touched
  // only on the loop thread (checked by `assertInLoop` in debug builds); other threads
  // reach the loop only through `pending`, which a Mutex guards, and the eventfd.
  private let epfd: Int32
  private let wakeFD: Int32
  private var handlers: [UInt64: any EventHandler] = [:]
  private var nextRegistration: UInt64 = 1
  private var timers = TimerHeap()
  private var stopped = false
  private var endOfIteration: [() -> Void] = []
  /// Work that yielded its turn (a connection over its read budget): run on the next
  /// iteration, which then polls epoll without waiting.
  private var nextIteration: [() -> Void] = []
  /// Where the work not yet run starts in `nextIteration`: what an iteration's time
  /// budget left over stays in place, ahead of what was yielded after it, and is not
  /// moved (a queue of thousands of deprioritized connections costs each iteration only
  /// the pieces it runs).
  private var nextIterationHead = 0
  private let pending = Mutex<[@Sendable () -> Void]>([])
  private let threadID = Mutex<pthread_t?>(nil)
  private let finished = DispatchSemaphore(value: 0)
  /// Set by `start()` on the caller's thread, so `stopAndWait` knows there is a thread to
  /// wait for even before that thread has run.
  private let started = Atomic<Bool>(false)
  /// One read buffer for every connection of this loop: idle connections hold none.
  public let scratch: UnsafeMutableRawBufferPointer
  public let name: String
  /// How long this loop's turns work: see `LoopTurnStats`.
  public let turns: LoopTurnStats

  /// How many due timers one turn runs. Timeouts come in crowds (a flood of abandoned
  /// handshakes all expires within a millisecond), and each closes a connection; the rest
  /// run on the next turns, after those turns' socket events, as `AcceptLoop` does with
  /// accepts.
  public static let timersPerTurn = 64

  /// The id of the wake-up registration: never handed to a handler.
  private static let wakeID: UInt64 = 0

  public init(name: String) throws(SystemError) {
    self.name = name
    turns = LoopTurnStats(loopName: name)
    epfd = epoll_create1(Int32(EPOLL_CLOEXEC))
    if epfd < 0 { throw SystemError("epoll_create1") }
    wakeFD = eventfd(0, Int32(EFD_NONBLOCK) | Int32(EFD_CLOEXEC))
    if wakeFD < 0 {
      let error = SystemError("eventfd")
      Glibc.close(epfd)
      throw error
    }
    scratch = .allocate(byteCount: 64 * 1024, alignment: 16)
    _ = anonauth_epoll_ctl(epfd, EPOLL_CTL_ADD, wakeFD, IOEvents.readable.rawValue, Self.wakeID)
  }

  deinit {
    Glibc.close(wakeFD)
    Glibc.close(epfd)
    scratch.deallocate()
  }

  /// Starts the loop on a new thread.
  public func start() {
    started.store(true, ordering: .releasing)
    let thread = Thread { [self] in
      threadID.withLock { $0 = pthread_self() }
      // Named for `top -H` and profilers (Linux limits names to 15 bytes).
      anonauth_set_thread_name(name)
      run()
      finished.signal()
    }
    thread.name = name
    thread.stackSize = 1 << 20
    thread.start()
  }

  /// Runs `task` on the loop thread, soon. Safe from any thread.
  public func execute(_ task: @escaping @Sendable () -> Void) {
    // Only the task that finds the queue empty wakes the loop: the loop takes the whole
    // queue at once, so tasks added before it does ride on that wake-up (one syscall for
    // a burst of replies instead of one each).
    let wasEmpty = pending.withLock { queue in
      queue.append(task)
      return queue.count == 1
    }
    guard wasEmpty else { return }
    var one: UInt64 = 1
    _ = write(wakeFD, &one, 8)
  }

  /// Asks the loop to stop after the current iteration and waits for its thread to end.
  public func stopAndWait() {
    execute { [self] in stopped = true }
    if started.load(ordering: .acquiring) { finished.wait() }
  }

  public var inLoop: Bool {
    guard let id = threadID.withLock({ $0 }) else { return false }
    return pthread_equal(id, pthread_self()) != 0
  }

  func assertInLoop() {
    assert(inLoop, "\(name): called off the loop thread")
  }

  // MARK: Registrations (loop thread only)

  /// How many times `modify` changed a registration's interest (an `epoll_ctl` each):
  /// what a connection's holding and releasing of its input costs the kernel, for tests.
  public private(set) var interestChanges = 0

  /// Registers `fd`; the returned id goes into epoll's data so that events for a
  /// descriptor number that was closed and reused are dropped.
  public func register(fd: Int32, events: IOEvents, handler: any EventHandler) throws(SystemError) -> UInt64 {
    assertInLoop()
    let id = nextRegistration
    nextRegistration += 1
    if anonauth_epoll_ctl(epfd, EPOLL_CTL_ADD, fd, events.rawValue | IOEvents.readHangup.rawValue, id) != 0 {
      throw SystemError("epoll_ctl ADD")
    }
    handlers[id] = handler
    return id
  }

  /// Changes what `fd` is watched for. `readHangup` is added unless `watchHangup` is
  /// false: a connection that has stopped reading must not be woken, level-triggered,
  /// again and again by a peer's half-close it will not look at yet.
  public func modify(fd: Int32, registration: UInt64, events: IOEvents, watchHangup: Bool = true) {
    assertInLoop()
    interestChanges &+= 1
    let extra = watchHangup ? IOEvents.readHangup.rawValue : 0
    _ = anonauth_epoll_ctl(epfd, EPOLL_CTL_MOD, fd, events.rawValue | extra, registration)
  }

  /// Removes the registration; call before closing the descriptor.
  public func deregister(fd: Int32, registration: UInt64) {
    assertInLoop()
    _ = anonauth_epoll_ctl(epfd, EPOLL_CTL_DEL, fd, 0, registration)
    handlers[registration] = nil
  }

  // MARK: Timers (loop thread only)

  /// Runs `body` on the loop once `delayNanos` have passed; cancel with the returned id.
  @discardableResult
  public func schedule(afterNanos delayNanos: UInt64, _ body: @escaping () -> Void) -> UInt64 {
    assertInLoop()
    // Saturates: a delay near UInt64.max must mean "never", not wrap into the past.
    let (deadline, overflow) = MonotonicClock.now().addingReportingOverflow(delayNanos)
    return timers.schedule(at: overflow ? .max : deadline, body)
  }

  public func cancelTimer(_ id: UInt64) {
    assertInLoop()
    timers.cancel(id)
  }

  /// Runs `body` once this iteration's events, tasks and timers are done: connections use
  /// it to write everything queued in the iteration with one TLS record and one syscall.
  public func atEndOfIteration(_ body: @escaping () -> Void) {
    assertInLoop()
    endOfIteration.append(body)
  }

  /// Runs `body` on the next iteration, after that iteration's events, without waiting
  /// for a new one: a connection that used up its work budget yields with it, so that
  /// one busy peer cannot hold the loop while others wait (OpenSSL may hold decrypted
  /// bytes that no epoll event will announce). An iteration runs such work for at most
  /// `yieldedWorkNanosPerTurn`; the rest waits for the next one.
  public func runOnNextIteration(_ body: @escaping () -> Void) {
    assertInLoop()
    nextIteration.append(body)
  }

  // MARK: The loop

  private func run() {
    let maxEvents: Int32 = 256
    let events = UnsafeMutablePointer<UInt32>.allocate(capacity: Int(maxEvents))
    let datas = UnsafeMutablePointer<UInt64>.allocate(capacity: Int(maxEvents))
    defer {
      events.deallocate()
      datas.deallocate()
    }
    while !stopped {
      var timeout: Int32 = -1
      if nextIterationHead < nextIteration.count {
        timeout = 0
      } else if let deadline = timers.nextDeadline() {
        let now = MonotonicClock.now()
        // Round up, so that a timer is never woken for early and spun on.
        timeout = deadline <= now ? 0 : Int32(min((deadline - now + 999_999) / 1_000_000, 60_000))
      }
      let n = anonauth_epoll_wait(epfd, events, datas, maxEvents, timeout)
      if n < 0 && anonauth_errno() != EINTR { break }
      let turnStarted = MonotonicClock.now()
      // What earlier iterations yielded ends here, before this one's events can add to
      // it: work yielded now waits for the next iteration, as its name says.
      let yieldedEnd = nextIteration.count
      defer { turns.record(MonotonicClock.now() - turnStarted) }
      for i in 0..<max(0, Int(n)) {
        let id = datas[i]
        if id == Self.wakeID {
          var value: UInt64 = 0
          _ = read(wakeFD, &value, 8)
          continue
        }
        handlers[id]?.handleEvents(IOEvents(rawValue: events[i]))
      }
      if nextIterationHead < yieldedEnd { runYielded(until: yieldedEnd) }
      runPending()
      for callback in timers.popDue(now: MonotonicClock.now(), limit: Self.timersPerTurn) { callback() }
      while !endOfIteration.isEmpty {
        let batch = endOfIteration
        endOfIteration.removeAll(keepingCapacity: true)
        for body in batch { body() }
      }
    }
    runPending()
  }

  /// Runs the work yielded on the last iteration for at most `yieldedWorkNanosPerTurn`
  /// (at least one piece): the rest goes first on the next iteration, after that
  /// iteration's events and the tasks of other threads. Yielded work is what a connection
  /// had left past its budget, or everything a deprioritized one does: a peer that keeps
  /// the loop busy gets what is left over, not a turn as long as it likes.
  private func runYielded(until end: Int) {
    let started = MonotonicClock.now()
    while nextIterationHead < end {
      let body = nextIteration[nextIterationHead]
      nextIterationHead += 1
      body()
      if MonotonicClock.now() - started >= Self.yieldedWorkNanosPerTurn { break }
    }
    // Run pieces are dropped once they are half the array (amortized constant time).
    if nextIterationHead == nextIteration.count {
      nextIteration.removeAll(keepingCapacity: true)
      nextIterationHead = 0
    } else if nextIterationHead >= nextIteration.count / 2 {
      nextIteration.removeFirst(nextIterationHead)
      nextIterationHead = 0
    }
  }

  /// How long one iteration runs yielded work (`runOnNextIteration`) before it takes new
  /// events again: a bystander's request waits behind at most this much of it (and one
  /// piece: a connection's read budget, or a handshake).
  public static let yieldedWorkNanosPerTurn: UInt64 = 500_000

  private func runPending() {
    while true {
      let tasks = pending.withLock { queue -> [@Sendable () -> Void] in
        let taken = queue
        queue.removeAll(keepingCapacity: true)
        return taken
      }
      if tasks.isEmpty { return }
      for task in tasks { task() }
    }
  }
}
