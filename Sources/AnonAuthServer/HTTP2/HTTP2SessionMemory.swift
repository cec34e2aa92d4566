import CNghttp2

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The allocator every server session's libnghttp2 uses (`nghttp2_session_server_new3`).
/// It differs from malloc in one thing: blocks of `pagedThreshold` bytes or more get
/// pages of their own (mmap), which the kernel makes resident only where written. The
/// one such block a session has is its outbound frame buffer (16 KiB and a few bytes,
/// allocated at session creation and kept for its life): an idle connection that sent a
/// few small frames has written only its first page. From malloc, the block sits in
/// heap that earlier handshakes already touched, so all of it stayed resident: most of
/// an idle HTTP/2 connection's cost over a native one (docs/benchmarks/).
///
/// Each block starts with a 16-byte header holding its size (16 keeps malloc's
/// alignment), so `free` knows which kind it is and how much to unmap.
enum HTTP2SessionMemory {
  static let pagedThreshold = 16 * 1024
  static let headerBytes = 16

  /// The allocator to give libnghttp2; it copies the struct into each session.
  static var allocator: nghttp2_mem {
    nghttp2_mem(
      mem_user_data: nil,
      malloc: { size, _ in HTTP2SessionMemory.allocate(size) },
      free: { pointer, _ in HTTP2SessionMemory.release(pointer) },
      calloc: { count, size, _ in HTTP2SessionMemory.allocateZeroed(count, size) },
      realloc: { pointer, size, _ in HTTP2SessionMemory.reallocate(pointer, size) })
  }

  static func allocate(_ size: Int) -> UnsafeMutableRawPointer? {
    let (total, overflow) = size.addingReportingOverflow(headerBytes)
    guard !overflow, size >= 0 else { return nil }
    let base: UnsafeMutableRawPointer
    if size >= pagedThreshold {
      guard let mapped = mmap(nil, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
        mapped != UnsafeMutableRawPointer(bitPattern: -1)
      else { return nil }
      base = mapped
    } else {
      guard let block = malloc(total) else { return nil }
      base = block
    }
    base.storeBytes(of: size, as: Int.self)
    return base + headerBytes
  }

  static func allocateZeroed(_ count: Int, _ size: Int) -> UnsafeMutableRawPointer? {
    let (bytes, overflow) = count.multipliedReportingOverflow(by: size)
    guard !overflow, let block = allocate(bytes) else { return nil }
    // Mapped pages come zeroed (and stay untouched); heap memory is cleared here.
    if bytes < pagedThreshold { block.initializeMemory(as: UInt8.self, repeating: 0, count: bytes) }
    return block
  }

  static func release(_ pointer: UnsafeMutableRawPointer?) {
    guard let pointer else { return }
    let base = pointer - headerBytes
    let size = base.load(as: Int.self)
    if size >= pagedThreshold {
      munmap(base, size + headerBytes)
    } else {
      free(base)
    }
  }

  static func reallocate(_ pointer: UnsafeMutableRawPointer?, _ size: Int) -> UnsafeMutableRawPointer? {
    guard let pointer else { return allocate(size) }
    let old = (pointer - headerBytes).load(as: Int.self)
    guard let moved = allocate(size) else { return nil }
    moved.copyMemory(from: pointer, byteCount: min(old, size))
    release(pointer)
    return moved
  }
}
