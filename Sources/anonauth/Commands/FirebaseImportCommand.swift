import AnonAuthCrypto
import AnonAuthWire
import Foundation

/// `anonauth admin import-firebase FILE --hash-config FILE`: a Firebase export brought
/// over in batches of 1000, uids kept, with a progress bar; row errors are reported with
/// their index in the file and the rest goes on.
enum FirebaseImportCommand {
  static let batchSize = CallLimits.maxImportAccounts

  static func run(_ c: AdminCommand.Context) async throws(CLIError) {
    let file = try c.arg(0, "FILE (firebase auth:export output, JSON or CSV)")
    let accounts = try FirebaseExportFile.load(file)
    var request = ImportAccountsRequest(projectId: c.project)
    var parsedConfig: ImportHashConfig?
    if let path = c.arguments["hash-config"] {
      let config = try hashConfig(path)
      parsedConfig = config
      request.hashConfig = PasswordHashConfig(
        algorithm: config.algorithm.rawValue, signerKey: config.signerKey,
        saltSeparator: config.saltSeparator,
        rounds: UInt32(clamping: config.rounds), memCost: UInt32(clamping: config.memCost),
        saltFirst: config.saltFirst)
    }
    if let email = c.arguments["check-password"] {
      let password = try SecretInput.password(c.arguments, prompt: "Password of \(email): ")
      if let why = ImportPasswordCheck.mismatch(
        email: email, password: password, accounts: accounts, config: parsedConfig, file: file)
      {
        throw .failed(why)
      }
      FileHandle.standardError.write(Data("--check-password: \(email)'s password matches its hash\n".utf8))
    }
    switch c.arguments["on-conflict"] ?? "skip" {
    case "skip": request.onConflict = .skip
    case "fail": request.onConflict = .fail
    default: throw .usage("--on-conflict: skip or fail")
    }
    request.dryRun = c.arguments.has("dry-run")
    // A small admin call first: the daemon takes frames over 64 KiB (a batch of accounts)
    // only on a connection one of whose calls has passed the admin key check; it also
    // finds a wrong project before the first batch is sent.
    let _: ProjectConfig = try await c.admin.getProjectConfig(GetProjectConfigRequest(projectId: c.project))
    let bar = ProgressBar(total: accounts.count, label: request.dryRun ? "checking" : "importing")
    var imported = 0
    var skipped = 0
    var errors: [ImportRowError] = []
    for start in stride(from: 0, to: accounts.count, by: batchSize) {
      request.accounts = Array(accounts[start..<min(start + batchSize, accounts.count)])
      request.firstIndex = UInt64(start)
      let response: ImportAccountsResponse = try await c.admin.importAccounts(request)
      imported += Int(response.imported)
      skipped += Int(response.skipped)
      errors += response.errors
      bar.update(start + request.accounts.count)
    }
    bar.finish()
    let verb = request.dryRun ? "would import" : "imported"
    var text =
      "\(verb) \(imported), skipped \(skipped) that exist, refused \(errors.count) of \(accounts.count)"
    for e in errors.prefix(50) { text += "\n  row \(e.index) \(e.localId): \(e.reason): \(e.message)" }
    if errors.count > 50 { text += "\n  ... and \(errors.count - 50) more (--json lists them all)" }
    AdminCommand.out(
      c,
      [
        "imported": .int(Int64(imported)), "skipped": .int(Int64(skipped)), "dry_run": .bool(request.dryRun),
        "errors": .array(
          errors.map {
            .object([
              "index": .int(Int64(clamping: $0.index)), "local_id": .string($0.localId),
              "reason": .string($0.reason), "message": .string($0.message),
            ])
          }),
      ], text)
    // A dry run with refused rows fails too: a script checking first stops there.
    if !errors.isEmpty {
      throw .failed("\(errors.count) rows \(request.dryRun ? "would be refused" : "were not imported")")
    }
  }

  /// The console's `hash_config { ... }` block or the same keys as JSON, checked here so
  /// a typo is found before the first batch is sent.
  static func hashConfig(_ path: String) throws(CLIError) -> ImportHashConfig {
    guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
      throw .usage("cannot read \(path)")
    }
    let config: ImportHashConfig
    do {
      config = try ImportHashConfig(parsing: text)
    } catch {
      throw .usage("\(path): \(error.message)")
    }
    return config
  }
}
