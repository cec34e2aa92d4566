/// Jobs waiting for a pool thread, served round robin: first across projects, then
/// across the IP keys within a project. One IP's backlog then delays another caller by
/// about one job per busy source, not by the whole backlog (first come, first served let
/// one address with ten accounts take a sign-in from 94 ms to 4.6 s). Jobs of one source
/// keep their order; internal work (`Admitted.internalWork`) shares one source.
struct FairQueue<Job> {
  private struct Project {
    var order: [String] = []
    var jobs: [String: [Job]] = [:]

    var isEmpty: Bool { order.isEmpty }

    mutating func append(_ job: Job, ip: String) {
      if jobs[ip] == nil { order.append(ip) }
      jobs[ip, default: []].append(job)
    }

    mutating func popFirst() -> Job? {
      guard !order.isEmpty else { return nil }
      let ip = order.removeFirst()
      guard var list = jobs.removeValue(forKey: ip), !list.isEmpty else { return nil }
      let job = list.removeFirst()
      if !list.isEmpty {
        jobs[ip] = list
        order.append(ip)
      }
      return job
    }
  }

  private var projects: [String: Project] = [:]
  private var order: [String] = []
  /// Jobs waiting.
  private(set) var count = 0

  mutating func append(_ job: Job, project: String, ip: String) {
    if projects[project] == nil { order.append(project) }
    projects[project, default: Project()].append(job, ip: ip)
    count += 1
  }

  /// The next job: the first of the next source in turn.
  mutating func popFirst() -> Job? {
    while !order.isEmpty {
      let project = order.removeFirst()
      guard var entry = projects.removeValue(forKey: project) else { continue }
      let job = entry.popFirst()
      if !entry.isEmpty {
        projects[project] = entry
        order.append(project)
      }
      if let job {
        count -= 1
        return job
      }
    }
    return nil
  }
}
