import AnonAuthCrypto
import AnonAuthStore
import AnonAuthWire

/// Checking a password against a hash imported from Firebase: the hash config is read
/// and unsealed, the check runs on the password pool like any other (admitted as
/// `.password`), and a match asks for a re-hash so the account moves to AnonAuth's own
/// scrypt at its first sign-in.
extension ServiceEnvironment {
  func verifyImportedPassword(
    _ password: String, against imported: ImportedPasswordHash, projectID: String, _ admitted: Admitted
  ) async throws(RPCError) -> PasswordHasher.Verification {
    let ticket = try admitted.enter(.password)
    defer { ticket?.leave() }
    let configID = imported.configID
    let sealed = try await read { db in
      try PasswordHashConfigsRepository.get(db, projectID: projectID, configID: configID)
    }
    guard let sealed,
      let bytes = try? AESGCM.open(
        sealed, key: masterKey, associatedData: Array("\(projectID)/\(configID)".utf8)),
      let config = try? ImportHashConfig(decoding: bytes)
    else {
      logger.error(
        "an imported password hash names a hash config that does not open", ["config_id": .string(configID)])
      return .init(matches: false, needsRehash: false)
    }
    let matches: Bool
    do {
      matches = try await passwordPool.submit(admitted) { () throws(Never) -> Bool in
        config.verify(password: password, salt: imported.salt, hash: imported.hash)
      }
    } catch {
      throw passwordFailure(error)
    }
    return .init(matches: matches, needsRehash: matches)
  }
}
