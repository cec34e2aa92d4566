import Foundation
import Glibc

/// Reads passwords and tokens without putting them on the command line, where `ps` and
/// shell history would show them: from a prompt on the terminal with echo off, or from
/// standard input (`--password-stdin`, or whenever stdin is not a terminal).
enum SecretInput {
  /// A password: refused from a flag, read from stdin or prompted for.
  static func password(_ arguments: Arguments, prompt: String = "Password: ") throws(CLIError) -> String {
    if arguments["password"] != nil {
      throw .usage(
        "passwords are never taken from a flag: type it at the prompt or pipe it with --password-stdin")
    }
    let secret: String
    if arguments.has("password-stdin") || isatty(STDIN_FILENO) == 0 {
      secret = try readStandardInput()
    } else {
      secret = try promptWithoutEcho(prompt)
    }
    guard !secret.isEmpty else { throw .usage("the password is empty") }
    return secret
  }

  /// A token given as `--NAME TOKEN`, or read from stdin with `--NAME-stdin`.
  static func token(_ arguments: Arguments, _ name: String) throws(CLIError) -> String {
    if arguments.has("\(name)-stdin") { return try readStandardInput() }
    guard let value = arguments[name], !value.isEmpty else {
      throw .usage("expected --\(name) TOKEN (or --\(name)-stdin)")
    }
    return value
  }

  /// The first line of standard input, without its line ending.
  static func readStandardInput() throws(CLIError) -> String {
    guard let line = Swift.readLine(strippingNewline: true) else {
      throw .usage("nothing on standard input")
    }
    return line.hasSuffix("\r") ? String(line.dropLast()) : line
  }

  /// Prompts on the terminal with echo off (termios), and restores it.
  static func promptWithoutEcho(_ prompt: String) throws(CLIError) -> String {
    let tty = open("/dev/tty", O_RDWR | O_CLOEXEC)
    guard tty >= 0 else { throw .usage("no terminal to prompt on: use --password-stdin") }
    defer { close(tty) }
    _ = prompt.withCString { write(tty, $0, strlen($0)) }
    var saved = termios()
    guard tcgetattr(tty, &saved) == 0 else {
      throw .usage("cannot configure the terminal: use --password-stdin")
    }
    var silent = saved
    silent.c_lflag &= ~tcflag_t(ECHO)
    silent.c_lflag |= tcflag_t(ECHONL)
    _ = tcsetattr(tty, TCSAFLUSH, &silent)
    defer { _ = tcsetattr(tty, TCSAFLUSH, &saved) }
    var bytes: [UInt8] = []
    var byte: UInt8 = 0
    while read(tty, &byte, 1) == 1 {
      if byte == 10 { break }
      bytes.append(byte)
      if bytes.count > 8192 { break }
    }
    if bytes.last == 13 { bytes.removeLast() }
    return String(decoding: bytes, as: UTF8.self)
  }
}
