import AnonAuthWire

/// docs/reasons.md, written from `ReasonCatalogue`: the page cannot list a reason the
/// server does not send, nor miss one it does.
enum ReasonsPage {
  static func render() -> String {
    var out = ReferencePages.banner(
      source: "Sources/AnonAuthWire/Status/ReasonCatalogue.swift", command: "reasons")
    out += """
      # Reason codes

      A call that fails is answered with a gRPC status code and a **reason**: a stable
      upper-case name a program can branch on (the message beside it is for people and may
      change). A reason is always sent with the same status code. `details` adds values
      some reasons need (`retry_after_seconds`, `provider_id`, `email`).

      Reasons are added, never renamed: a client should treat a reason it does not know by
      its status code. A connection, rather than a call, can also end with a `GoAway` frame
      and a reason of its own, and `ImportUsers` reports refused rows with reasons of their
      own (the last two sections).

      ## What a client should do

      | action | meaning |
      | --- | --- |

      """
    for action in ClientAction.allCases {
      out += "| \(action.rawValue) | \(cell(action.meaning)) |\n"
    }
    for group in ReasonCatalogue.Group.allCases {
      out += "\n## \(group.rawValue)\n\n"
      out += "| reason | status code | when | what a client should do |\n| --- | --- | --- | --- |\n"
      for entry in ReasonCatalogue.reasons where entry.group == group {
        let code = entry.reason.code
        out +=
          "| `\(entry.reason.name)` | `\(code)` (\(code.rawValue)) | \(cell(entry.when)) | **\(entry.action.rawValue).** \(cell(entry.advice)) |\n"
      }
    }
    out += """

      ## GoAway reasons

      The server sends `GoAway` with `last_call_id` and one of these reasons, answers the
      calls up to `last_call_id`, and closes the connection. Calls above it were not
      processed: a client may resend them on a new connection.

      | reason | when | what a client should do |
      | --- | --- | --- |

      """
    for entry in ReasonCatalogue.goAwayReasons {
      out +=
        "| `\(entry.reason.name)` | \(cell(entry.when)) | **\(entry.action.rawValue).** \(cell(entry.advice)) |\n"
    }
    out += """

      ## ImportUsers row reasons

      `ImportUsers` (`anonauth admin import-firebase`) succeeds as a call and reports each
      row it could not import in `errors`, with the row's index, its uid and one of these
      reasons; the other rows of the batch are imported.

      | reason | when | what to do |
      | --- | --- | --- |

      """
    for entry in ReasonCatalogue.importRowReasons {
      out += "| `\(entry.reason.name)` | \(cell(entry.when)) | \(cell(entry.advice)) |\n"
    }
    out += firebaseSection()
    return out
  }

  /// How each reason is answered on Firebase's JSON API (docs/http-api.md), from the
  /// catalogue's Firebase column.
  static func firebaseSection() -> String {
    var out = """

      ## On Firebase's JSON API

      The HTTPS JSON API ([http-api.md](http-api.md)) answers a failed call with the HTTP
      status and the `error.message` below, in Firebase's error body. A message marked
      "+ detail" is followed by ` : ` and the native message, as Firebase does for those
      codes; SDKs read the part before the colon. `INVALID_ID_TOKEN`, `TOKEN_EXPIRED`,
      `USER_NOT_FOUND` and `USER_DISABLED` make Firebase's SDKs sign the user out, so only
      the reasons of the same name are sent as them.

      | reason | HTTP status | Firebase message |
      | --- | --- | --- |

      """
    for entry in ReasonCatalogue.reasons {
      let answer = ReasonCatalogue.firebaseAnswer(forReason: entry.reason.name, code: entry.reason.code)
      let detail = answer.withDetail ? " + detail" : ""
      out += "| `\(entry.reason.name)` | \(answer.httpStatus) | `\(cell(answer.message))`\(detail) |\n"
    }
    return out
  }

  /// Text fit for a table cell: a `|` would end the cell.
  static func cell(_ text: String) -> String {
    text.replacingOccurrences(of: "|", with: "\\|")
  }
}
