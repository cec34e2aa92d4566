import AnonAuthService
import Testing

@Suite struct EmailAddressTests {
  @Test(arguments: [
    ("ann@example.com", "ann@example.com"),
    ("  Ann.Lee@Example.COM \n", "ann.lee@example.com"),
    ("ANN+tag@sub.example.co.uk", "ann+tag@sub.example.co.uk"),
    ("o'brien@example.ie", "o'brien@example.ie"),
    ("x@xn--bcher-kva.example", "x@xn--bcher-kva.example"),
    ("a!#$%&*/=?^_`{|}~-@example.org", "a!#$%&*/=?^_`{|}~-@example.org"),
  ])
  func normalisesAsFirebaseDoes(raw: String, normalised: String) {
    #expect(EmailAddress.normalize(raw) == normalised)
  }

  @Test(arguments: [
    "", "   ", "plainaddress", "@example.com", "ann@", "ann@@example.com", "ann@exa@mple.com",
    "ann@localhost", "ann@example", ".ann@example.com", "ann.@example.com", "an..n@example.com",
    "ann@-example.com", "ann@example-.com", "ann@exa_mple.com", "ann@example..com", "ann@.example.com",
    "ann@example.com.", "ann@192.168.0.1", "ann@[192.168.0.1]", "\"ann\"@example.com", "an n@example.com",
    "änn@example.com", "ann@bücher.example", "ann@example.com\u{0}", "ann\n@example.com",
  ])
  func refusesInvalid(raw: String) {
    #expect(EmailAddress.normalize(raw) == nil)
  }

  @Test func lengthLimits() {
    let local64 = String(repeating: "a", count: 64)
    #expect(EmailAddress.normalize(local64 + "@example.com") != nil)
    #expect(EmailAddress.normalize(local64 + "a@example.com") == nil)
    // 254 bytes in all is the most; a 63-character label is the longest.
    let label = String(repeating: "b", count: 63)
    let domain = [label, label, label, String(repeating: "c", count: 61 - 2 - 12)].joined(separator: ".")
    let atLimit = "a@" + domain + ".com"
    #expect(atLimit.utf8.count <= 254)
    #expect(EmailAddress.normalize(atLimit) != nil)
    #expect(EmailAddress.normalize("a@" + String(repeating: "d", count: 64) + ".com") == nil)
    let over =
      String(repeating: "a", count: 60) + "@" + [label, label, label, "ccc"].joined(separator: ".") + ".com"
    #expect(over.utf8.count > 254)
    #expect(EmailAddress.normalize(over) == nil)
  }
}
