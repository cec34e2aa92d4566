import Foundation
import Testing

@testable import AnonAuthServer

/// The byte paths of `ASCIIText` find the very pieces `String`'s Character operations
/// find, on ASCII text and on text that is not (combining marks after a separator,
/// `CharacterSet.whitespaces` beyond ASCII), so a request is read as it was.
@Suite struct ASCIITextTests {
  static let texts = [
    "", "/", "//", "/v1/accounts:signUp", "/identitytoolkit.googleapis.com/v1/projects/p/accounts",
    "key=AIza&x=1&&y", "&=&==&a=b=c&", "a,b, c ,", " , ,\t", "10.0.0.1, 203.0.113.9",
    "/v1/\u{301}x/é", "a&\u{301}b=c", "x,\u{301} y ,z\u{A0}", "\u{3000}10.0.0.1\u{3000}", "a\r\nb,c",
  ]

  @Test(arguments: texts)
  func splitsAsCharactersDo(text: String) {
    for separator: Character in ["/", "&", ",", "="] {
      for omitting in [true, false] {
        #expect(
          ASCIIText.split(text[...], separator, omittingEmpty: omitting)
            == text.split(separator: separator, omittingEmptySubsequences: omitting))
      }
    }
  }

  @Test(arguments: texts)
  func findsTheLastListItemAsFoundationDoes(text: String) {
    let last = text.split(separator: ",").last?.trimmingCharacters(in: .whitespaces)
    #expect(ASCIIText.lastListItem(text) == (last?.isEmpty == false ? last : nil))
  }

  @Test func decodesFormsAsBefore() {
    #expect(
      FormDecoding.fields("key=a%20b&key=2&c&d=e=f&+x+=1+2") == [
        "key": "a b", "c": "", "d": "e=f", " x ": "1 2",
      ])
    #expect(FormDecoding.percentDecoded("a+b%2", plusIsSpace: false) == "a+b%2")
  }
}
