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
  /// Where blocks of the chunk `size(of:)` found last start and end.
  private var lastChunk: (start: UnsafeRawPointer, end: UnsafeRawPointer)?
  /// From the lowest chunk's start to the highest chunk's end.
  private var span: (start: UnsafeRawPointer, end: UnsafeRawPointer)?

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
    // Hot for messages of many strings, so the common answers come first: the chunk
    // found last (strings are read in about the order they were allocated), then
    // "outside every chunk" (protobuf-c's static default, for every absent string).
    if let last = lastChunk, pointer >= last.start, pointer < last.end {
      return pointer.load(fromByteOffset: -Self.headerBytes, as: Int.self)
    }
    guard let span, pointer >= span.start, pointer < span.end else { return nil }
    for chunk in chunks {
      let start = UnsafeRawPointer(chunk.base + Self.headerBytes)
      let end = UnsafeRawPointer(chunk.base + chunk.count)
      if pointer >= start, pointer < end {
        lastChunk = (start, end)
        return pointer.load(fromByteOffset: -Self.headerBytes, as: Int.self)
      }
    }
    return nil
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
      let start = UnsafeRawPointer(header)
      let end = start + chunkBytes
      span = span.map { (min($0.start, start), max($0.end, end)) } ?? (start, end)
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
