import CShims

/// glibc's allocator settings for a server that reads frames of up to 4 MiB on its event
/// loops.
///
/// By default a buffer of a few MiB is mapped fresh for each use and its pages given back
/// when it is freed (or trimmed off the top of a thread's heap), so every large frame
/// paid for page faults on every copy: under a client sending 1-2 MiB requests a third
/// of the loop's time went to faults, and loop turns of 2.5 to 5 ms held every other
/// connection. Below these thresholds such buffers come from the heap and stay mapped
/// for the next frame. Memory is still returned: `MemoryTrimmer` calls `malloc_trim`
/// after bursts of closed connections, and free space above 8 MiB at a heap's top is
/// trimmed as before.
enum HeapTuning {
  /// Allocations at least this large are mapped on their own (the default starts at
  /// 128 KiB); twice the largest frame, so a frame and its decoded copy stay in the heap.
  static let mmapThresholdBytes: Int32 = 8 << 20
  /// Free space at a heap's top above this is given back at once.
  static let trimThresholdBytes: Int32 = 8 << 20

  /// Applies both first thing in the daemon's run, before the loops, pools and store
  /// allocate; returns whether glibc took them (the daemon warns if not).
  static func apply() -> Bool {
    anonauth_set_heap_thresholds(mmapThresholdBytes, trimThresholdBytes) == 1
  }
}
