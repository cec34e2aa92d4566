/// The reason of one refused row of `ImportUsers` (`ImportRowError.reason`): the call
/// succeeds and reports each row it could not import with one of these. Like `Reason`,
/// each exists only as a static below and is described in `ReasonCatalogue.importRowReasons`.
public struct ImportRowReason: Hashable, Sendable, CustomStringConvertible {
  public let name: String

  init(_ name: String) { self.name = name }

  public var description: String { name }

  public static let invalidUID = ImportRowReason("INVALID_UID")
  public static let invalidEmail = ImportRowReason("INVALID_EMAIL")
  public static let invalidField = ImportRowReason("INVALID_FIELD")
  public static let forbiddenClaim = ImportRowReason("FORBIDDEN_CLAIM")
  public static let invalidPasswordHash = ImportRowReason("INVALID_PASSWORD_HASH")
  public static let missingHashConfig = ImportRowReason("MISSING_HASH_CONFIG")
  public static let invalidProvider = ImportRowReason("INVALID_PROVIDER")
  public static let duplicateUID = ImportRowReason("DUPLICATE_UID")
  public static let duplicateEmail = ImportRowReason("DUPLICATE_EMAIL")
  public static let uidExists = ImportRowReason("UID_EXISTS")
  public static let emailExists = ImportRowReason("EMAIL_EXISTS")
  public static let credentialAlreadyInUse = ImportRowReason("CREDENTIAL_ALREADY_IN_USE")
}
