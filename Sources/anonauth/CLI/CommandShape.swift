/// What one command accepts: its positionals and its own options and switches, on top of
/// the connection options every command takes. Anything else is refused by name with the
/// command's usage, instead of being dropped (a positional project once was, and the call
/// went to project "").
struct CommandShape {
  /// The command as typed, e.g. "admin get-account".
  let name: String
  /// The usage shown when an argument is refused, e.g. "[PROJECT_ID] UID".
  let usage: String
  /// How many positionals the command takes (after its name).
  let positionals: ClosedRange<Int>
  /// Options that take a value.
  let options: Set<String>
  /// Flags that take none.
  let switches: Set<String>

  init(
    _ name: String, usage: String = "", positionals: ClosedRange<Int> = 0...0, options: Set<String> = [],
    switches: Set<String> = []
  ) {
    self.name = name
    self.usage = usage
    self.positionals = positionals
    self.options = options.union(Connection.optionNames)
    self.switches = switches.union(Connection.commonSwitches)
  }

  /// "anonauth admin get-account [PROJECT_ID] UID [--opt V]...": what the command expects.
  var expected: String {
    var parts = ["anonauth", name]
    if !usage.isEmpty { parts.append(usage) }
    let own =
      options.subtracting(Connection.optionNames).sorted().map { "--\($0) V" }
      + switches.subtracting(Connection.commonSwitches).sorted().map { "--\($0)" }
    parts += own.map { "[\($0)]" }
    return parts.joined(separator: " ")
  }

  /// Refuses an unknown option or switch, a value given to a switch, and a positional
  /// count out of range; a known option at the end with no value is refused last.
  func check(_ arguments: Arguments, positionalCount: Int? = nil) throws(CLIError) {
    for name in arguments.options.keys.sorted() where !options.contains(name) {
      if switches.contains(name) { throw .usage("\(self.name): --\(name) takes no value") }
      throw .usage("\(self.name): unknown option --\(name); expected: \(expected) (see --help)")
    }
    for name in arguments.switches.sorted() where !switches.contains(name) {
      throw .usage("\(self.name): unknown option --\(name); expected: \(expected) (see --help)")
    }
    if let dangling = arguments.dangling {
      guard options.contains(dangling) || switches.contains(dangling) else {
        throw .usage("\(self.name): unknown option --\(dangling); expected: \(expected) (see --help)")
      }
      throw .usage("--\(dangling) needs a value")
    }
    let count = positionalCount ?? arguments.positionals.count
    let given = Array(arguments.positionals.suffix(count))
    if count > positionals.upperBound {
      throw .usage(
        "\(name): unexpected argument \"\(given[positionals.upperBound])\"; expected: \(expected)")
    }
    if count < positionals.lowerBound {
      throw .usage("\(name): missing argument; expected: \(expected)")
    }
  }
}
