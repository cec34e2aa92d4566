import AnonAuthFuzz
import Foundation

// Built two ways. `make fuzz` compiles with `-sanitize=fuzzer,address -D FUZZING`:
// SwiftPM names an executable's entry point `anonauth_fuzz_main` and links it as `main`,
// so that entry point hands the command line to libFuzzer's driver, which calls
// `fuzzOneInput` for the target named by ANONAUTH_FUZZ_TARGET. A plain build replays
// files: `anonauth-fuzz TARGET FILE...`.

#if FUZZING
  typealias FuzzCallback = @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt

  @_silgen_name("LLVMFuzzerRunDriver")
  func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: FuzzCallback
  ) -> CInt

  /// The target named by ANONAUTH_FUZZ_TARGET, read on first use; libFuzzer calls back
  /// on one thread only.
  nonisolated(unsafe) private var selected: FuzzTarget?

  private func target() -> FuzzTarget {
    if let selected { return selected }
    let name = ProcessInfo.processInfo.environment["ANONAUTH_FUZZ_TARGET"] ?? ""
    guard let target = FuzzTarget(rawValue: name) else {
      let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: " ")
      FileHandle.standardError.write(Data("ANONAUTH_FUZZ_TARGET must be one of: \(names)\n".utf8))
      exit(2)
    }
    selected = target
    return target
  }

  @_cdecl("LLVMFuzzerTestOneInput")
  func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    target().run(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
    return 0
  }

  @_cdecl("anonauth_fuzz_main")
  func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    _ = target()
    var count = argc
    var arguments = argv
    return LLVMFuzzerRunDriver(&count, &arguments, fuzzOneInput)
  }
#else
  @main enum FuzzReplay {
    static func main() {
      let arguments = CommandLine.arguments.dropFirst()
      guard let name = arguments.first, let target = FuzzTarget(rawValue: name) else {
        let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: " ")
        FileHandle.standardError.write(Data("usage: anonauth-fuzz TARGET FILE...\ntargets: \(names)\n".utf8))
        exit(2)
      }
      for path in arguments.dropFirst() {
        guard let data = FileManager.default.contents(atPath: path) else {
          FileHandle.standardError.write(Data("cannot read \(path)\n".utf8))
          exit(1)
        }
        target.run(Array(data))
      }
    }
  }
#endif
