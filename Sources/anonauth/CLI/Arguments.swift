/// A command's arguments: `--name value`, `--name=value`, switches and positionals.
struct Arguments {
  private(set) var options: [String: String] = [:]
  private(set) var switches: Set<String> = []
  private(set) var positionals: [String] = []
  /// A last `--name` that is no known switch and has no value after it: reported by the
  /// command's shape (as unknown, or as needing a value), which knows the names.
  private(set) var dangling: String?

  /// - Parameter switchNames: flags that take no value.
  init(_ raw: [String], switchNames: Set<String>) {
    var index = 0
    while index < raw.count {
      let argument = raw[index]
      index += 1
      guard argument.hasPrefix("--"), argument.count > 2 else {
        positionals.append(argument)
        continue
      }
      let name = String(argument.dropFirst(2))
      if let eq = name.firstIndex(of: "=") {
        options[String(name[..<eq])] = String(name[name.index(after: eq)...])
        continue
      }
      if switchNames.contains(name) {
        switches.insert(name)
        continue
      }
      guard index < raw.count else {
        dangling = name
        break
      }
      options[name] = raw[index]
      index += 1
    }
  }

  func has(_ name: String) -> Bool { switches.contains(name) }

  /// For a command without a shape (bench): a dangling option is an error.
  func requireValues() throws(CLIError) {
    if let dangling { throw .usage("--\(dangling) needs a value") }
  }
  subscript(_ name: String) -> String? { options[name] }
}

/// Why the CLI stops: usage errors exit 2, call failures 1.
enum CLIError: Error, CustomStringConvertible {
  case usage(String)
  case failed(String)

  var description: String {
    switch self {
    case .usage(let s): s
    case .failed(let s): s
    }
  }
}
