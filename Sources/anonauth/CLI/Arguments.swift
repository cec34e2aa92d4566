/// A command's arguments: `--name value`, `--name=value`, switches and positionals.
struct Arguments {
  private(set) var options: [String: String] = [:]
  private(set) var switches: Set<String> = []
  private(set) var positionals: [String] = []

  /// - Parameter switchNames: flags that take no value.
  init(_ raw: [String], switchNames: Set<String>) throws(CLIError) {
    var index = 0
    while index < raw.count {
      let argument = raw[index]
      index += 1
      guard argument.hasPrefix("--"), argument.count > 2 else {
        positionals.append(argument)
        continue
      }
      var name = String(argument.dropFirst(2))
      if let eq = name.firstIndex(of: "=") {
        options[String(name[..<eq])] = String(name[name.index(after: eq)...])
        continue
      }
      if switchNames.contains(name) {
        switches.insert(name)
        continue
      }
      guard index < raw.count else { throw CLIError.usage("--\(name) needs a value") }
      name = String(name)
      options[name] = raw[index]
      index += 1
    }
  }

  func has(_ name: String) -> Bool { switches.contains(name) }
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
