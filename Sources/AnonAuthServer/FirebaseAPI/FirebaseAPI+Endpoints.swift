extension FirebaseAPI {
  /// Every endpoint this build serves, family by family; a family adds itself here.
  public static let allEndpoints: [Endpoint] =
    accountEndpoints + emailActionEndpoints + firebaseExchangeEndpoints + tokenEndpoints + adminEndpoints
    + legacyEndpoints + [revokeTokenEndpoint]
}
