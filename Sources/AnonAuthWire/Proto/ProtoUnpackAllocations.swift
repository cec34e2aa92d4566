internal import CProtobufC

/// The allocator handed to protobuf-c's `unpack`: a bump arena that records the size of
/// every block in a header in front of it.
///
/// protobuf-c stores a decoded string as a NUL-terminated `char *` and drops its length.
/// It allocates exactly `length + 1` bytes for each string, so the recorded size gives
/// the true length back, and a string with an embedded NUL decodes whole instead of being
/// cut at the NUL (which could make "victim@example.com\0x" read as another address).
///
/// A bump arena rather than `malloc` plus a table of sizes: a message of many small
/// values costs protobuf-c one allocation each, and a hash-table entry per block made
/// each of those several times dearer. Blocks are only freed with the arena, which is
/// when protobuf-c frees them anyway (`free_unpacked` at the end of the decode). The
/// counts let debug builds check that `free_unpacked` released everything, and tests
/// check that a refused message allocated nothing.
final class ProtoUnpackAllocations {
  /// What `malloc` guarantees, which is what protobuf-c assumes of its allocator; the
  /// header keeps every block on it.
  private static let alignment = 16
  private static let headerBytes = 16
  private static let firstChunkBytes = 16 * 1024
  private static let largestChunkBytes = 8 * 1024 * 1024

  /// Every chunk, for `size(of:)` to tell its blocks from protobuf-c's static defaults.
  private var chunks: [(base: UnsafeMutableRawPointer, count: Int)] = []
  private var cursor: UnsafeMutableRawPointer?
  private var remaining = 0
  private var nextChunkBytes = ProtoUnpackAllocations.firstChunkBytes
  /// The chunk `size(of:)` found last.
  private var lastChunk = 0

  /// Blocks handed out and not yet freed.
  private(set) var live = 0
  /// Blocks handed out in all.
  private(set) var count = 0

  init() {}

  deinit {
    for chunk in chunks { chunk.base.deallocate() }
  }

  var isEmpty: Bool { live == 0 }

  /// The size protobuf-c asked for when it allocated `pointer`, or nil when protobuf-c
  /// did not allocate it (the static empty string it uses as a default).
  func size(of pointer: UnsafeRawPointer) -> Int? {
    // Strings are read in about the order they were allocated: try the last chunk hit
    // first, so a message of many strings does not walk every chunk for each.
    if let size = size(of: pointer, inChunk: lastChunk) { return size }
    for index in chunks.indices {
      if let size = size(of: pointer, inChunk: index) {
        lastChunk = index
        return size
      }
    }
    return nil
  }

  private func size(of pointer: UnsafeRawPointer, inChunk index: Int) -> Int? {
    guard index < chunks.count else { return nil }
    let chunk = chunks[index]
    guard pointer >= UnsafeRawPointer(chunk.base + Self.headerBytes),
      pointer < UnsafeRawPointer(chunk.base + chunk.count)
    else { return nil }
    return pointer.load(fromByteOffset: -Self.headerBytes, as: Int.self)
  }

  private func allocate(_ size: Int) -> UnsafeMutableRawPointer {
    let rounded = (max(size, 1) + Self.alignment - 1) / Self.alignment * Self.alignment
    let needed = Self.headerBytes + rounded
    let header: UnsafeMutableRawPointer
    if let cursor, needed <= remaining {
      header = cursor
    } else {
      let chunkBytes = max(needed, nextChunkBytes)
      nextChunkBytes = min(nextChunkBytes * 2, Self.largestChunkBytes)
      header = UnsafeMutableRawPointer.allocate(byteCount: chunkBytes, alignment: Self.alignment)
      chunks.append((header, chunkBytes))
      remaining = chunkBytes
    }
    header.storeBytes(of: size, as: Int.self)
    cursor = header + needed
    remaining -= needed
    live += 1
    count += 1
    return header + Self.headerBytes
  }

  private func release() {
    live -= 1
  }

  /// A `ProtobufCAllocator` that calls back into this object. It holds an unretained
  /// pointer: the caller keeps `self` alive for as long as protobuf-c may use it.
  func makeAllocator() -> ProtobufCAllocator {
    ProtobufCAllocator(
      alloc: { context, size in
        guard let context else { return nil }
        return Unmanaged<ProtoUnpackAllocations>.fromOpaque(context).takeUnretainedValue()
          .allocate(size)
      },
      free: { context, pointer in
        guard let context, pointer != nil else { return }
        Unmanaged<ProtoUnpackAllocations>.fromOpaque(context).takeUnretainedValue().release()
      },
      allocator_data: Unmanaged.passUnretained(self).toOpaque())
  }
}
