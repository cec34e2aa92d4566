import AnonAuthCrypto
import Testing

/// Tokens and keys made by another implementation (PyJWT 2.15 with `cryptography` 48),
/// embedded so the test proves interoperability without Python at test time:
///
///     claims = {"iss": "https://securetoken.google.com/demo-project", "aud": "demo-project",
///               "sub": "pyjwt-user", "iat": 1700000000, "exp": 1700003600,
///               "email_verified": True, "firebase": {"identities": {"email":
///               ["a@example.com"]}, "sign_in_provider": "password"}}
///     jwt.encode(claims, rsa_key, algorithm="RS256", headers={"kid": "py-rsa"})
///     jwt.encode(claims, p256_key, algorithm="ES256", headers={"kid": "py-ec"})
enum PyJWTFixtures {
  static let rs256Token =
    "eyJhbGciOiJSUzI1NiIsImtpZCI6InB5LXJzYSIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJodHRwczovL3NlY3VyZXRva2VuLmdvb2dsZS5jb20vZGVtby1wcm9qZWN0IiwiYXVkIjoiZGVtby1wcm9qZWN0Iiwic3ViIjoicHlqd3QtdXNlciIsImlhdCI6MTcwMDAwMDAwMCwiZXhwIjoxNzAwMDAzNjAwLCJlbWFpbF92ZXJpZmllZCI6dHJ1ZSwiZmlyZWJhc2UiOnsiaWRlbnRpdGllcyI6eyJlbWFpbCI6WyJhQGV4YW1wbGUuY29tIl19LCJzaWduX2luX3Byb3ZpZGVyIjoicGFzc3dvcmQifX0.hqX42Vd9xRI95SSBnF_RpCBjlJTwFK1jGH_m-Kl8gsMJ06I1RByPzx1u-xgz59OThtkv49x2N5V-K8bD0idSk0_wQnRM42-5Ofo3ahQscFwgTKSmnurjcvh1uDnUi7XNdYETURpYz0DQXaVXnOQNkzXwZ5V5__HVyyCCh7lhbGbqiokc2MbWc6guEX3S1HILJ4SD2qQFiNxomGbq7ObT5JHbCmKOA-OVzGLE90k38Jj9CvCi5i4gHAvCoBAnKZysqGzKf_TWrrnoThj6FmXBKzACHbvI5ruNwsQV7h9Bh399wtHAgziZD6wFrjFNghkRnIKRl9gEdbvWsKHofz0D4g"
  static let rsaN =
    "yDwt8OxZlImH0tT_5JGj7O5v-kGnxFkzAimeGARqTQPYlr3vrM4-ec4y4nJnLCIdrRP1gmTR8barAKMnJuR_pMMR57eKRGTp3wGdKutSIKEM73mZ0_hxQW1YHh_2NckEL_1hnNqcrWp3Vaa1q15kNSwpyGKq7mOGn5TfhFfP9e9dYsZwRr6uVIyZJ2608bPFQFMvjybwEL_roI3d9gyar2E2pbcsztUKsoHBn8Pgxth4vZVL_VyWXyLuVT5rXDSV-9U5gzq8I13XGnu0uj_8sKmiYW7UXnlwqVCafj-c7GTXCPCzWAIjGTRm4FzA2-FUy05aY6WQe8LJfeCtj_Ehbw"
  static let rsaE = "AQAB"

  static let es256Token =
    "eyJhbGciOiJFUzI1NiIsImtpZCI6InB5LWVjIiwidHlwIjoiSldUIn0.eyJpc3MiOiJodHRwczovL3NlY3VyZXRva2VuLmdvb2dsZS5jb20vZGVtby1wcm9qZWN0IiwiYXVkIjoiZGVtby1wcm9qZWN0Iiwic3ViIjoicHlqd3QtdXNlciIsImlhdCI6MTcwMDAwMDAwMCwiZXhwIjoxNzAwMDAzNjAwLCJlbWFpbF92ZXJpZmllZCI6dHJ1ZSwiZmlyZWJhc2UiOnsiaWRlbnRpdGllcyI6eyJlbWFpbCI6WyJhQGV4YW1wbGUuY29tIl19LCJzaWduX2luX3Byb3ZpZGVyIjoicGFzc3dvcmQifX0.Fsk3eZxxEutVQtw5xANwVfi92PI1g6QoMtFc-gMKkt37sAY_9CkY-iyKjWprMB1Qhg4DiwWAUWtQVwh8Z0joyg"
  static let ecX = "pyWyxRTW5wTN9rl3QM_FlJXWn4FzxvOxLLRrHf-JS78"
  static let ecY = "rG7mQ8agmO4EX0Hzw-Rg1GoiLu1nGSY14BbzuNuMREU"
}
