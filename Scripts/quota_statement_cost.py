"""The sign-up quota's admission statement, timed by hand at a small and a large window
of one address: the per-event count (before migration 10) against the per-minute
counters. SQLite through Python's sqlite3, in memory; each statement in a transaction
rolled back, so the window stays as filled."""
import sqlite3, sys, time

HOUR = 3_600_000
NOW = 1_800_000_000_000 + HOUR

OLD = """INSERT INTO sign_up_events (project_id, ip_key, at_ms) SELECT ?1, ?2, ?3
WHERE (SELECT count(*) FROM sign_up_events WHERE project_id = ?1 AND ip_key = ?2 AND at_ms > ?4) < ?5"""
NEW = """INSERT INTO sign_up_buckets (project_id, ip_key, minute, count, oldest_ms, at_oldest, newest_ms)
SELECT ?1, ?2, ?6, 1, ?3, 1, ?3
WHERE (SELECT coalesce(sum(CASE WHEN newest_ms <= ?4 THEN 0 WHEN oldest_ms <= ?4 THEN max(0, count - at_oldest) ELSE count END), 0)
       FROM sign_up_buckets WHERE project_id = ?1 AND ip_key = ?2 AND minute BETWEEN ?7 AND ?8) < ?5
ON CONFLICT (project_id, ip_key, minute) DO UPDATE SET count = count + 1,
  at_oldest = CASE WHEN excluded.oldest_ms < oldest_ms THEN 1 WHEN excluded.oldest_ms = oldest_ms THEN at_oldest + 1 ELSE at_oldest END,
  oldest_ms = min(oldest_ms, excluded.oldest_ms), newest_ms = max(newest_ms, excluded.newest_ms)"""

def store(events):
    db = sqlite3.connect(":memory:", isolation_level=None)
    db.executescript("""
      CREATE TABLE sign_up_events (project_id TEXT NOT NULL, ip_key TEXT NOT NULL, at_ms INTEGER NOT NULL);
      CREATE INDEX sign_up_events_window ON sign_up_events(project_id, ip_key, at_ms);
      CREATE TABLE sign_up_buckets (project_id TEXT NOT NULL, ip_key TEXT NOT NULL, minute INTEGER NOT NULL,
        count INTEGER NOT NULL, oldest_ms INTEGER NOT NULL, at_oldest INTEGER NOT NULL, newest_ms INTEGER NOT NULL,
        PRIMARY KEY (project_id, ip_key, minute)) WITHOUT ROWID;""")
    step = max(1, HOUR // max(events, 1))
    db.execute("BEGIN")
    db.executemany("INSERT INTO sign_up_events VALUES ('p', '198.51.100.7', ?)",
                   ((NOW - HOUR + 1 + i * step % HOUR,) for i in range(events)))
    db.execute("""INSERT INTO sign_up_buckets SELECT project_id, ip_key, at_ms / 60000, count(*), min(at_ms), 1, max(at_ms)
                  FROM sign_up_events GROUP BY 1, 2, 3""")
    db.execute("COMMIT")
    return db

def per_call(db, sql, args, rounds):
    start = time.perf_counter()
    for _ in range(rounds):
        db.execute("BEGIN")
        db.execute(sql, args)
        db.execute("ROLLBACK")
    return (time.perf_counter() - start) / rounds * 1e6

first = (NOW - HOUR) // 60000
old_args = ("p", "198.51.100.7", NOW, NOW - HOUR, 10_000_000)
new_args = old_args + (NOW // 60000, first, first + 120)
sizes = [int(a) for a in sys.argv[1:]] or [10, 1_000_000]
results = {}
for events in sizes:
    db = store(events)
    rounds = 2000 if events < 100_000 else 20
    results[events] = (per_call(db, OLD, old_args, rounds), per_call(db, NEW, new_args, 2000))
    print(f"{events:>9} events in the window: per-event count {results[events][0]:9.1f} us, per-minute counters {results[events][1]:6.1f} us")
small, large = results[sizes[0]], results[sizes[-1]]
print(f"ratio large/small: per-event {large[0] / small[0]:.1f}x, per-minute {large[1] / small[1]:.2f}x")
