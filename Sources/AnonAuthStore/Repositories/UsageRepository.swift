/// SQL for usage counters: sign-ups per provider per day.
public enum UsageRepository {
  public static func countSignUp(_ db: Database, projectID: String, day: String, provider: String) throws {
    try db.executePipelined(
      """
      INSERT INTO sign_ups_daily (project_id, day, provider, count) VALUES (?,?,?,1)
      ON CONFLICT(project_id, day, provider) DO UPDATE SET count = count + 1
      """, [.text(projectID), .text(day), .text(provider)])
  }
}
