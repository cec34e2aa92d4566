"""The replicated store, black box: three daemons on loopback ports, each with its own
data dir and dqlite node. Sign-ups, links and refreshes run from several retrying clients
while the leader's daemon is killed with SIGKILL: every acknowledged write is on the
survivors, writes resume (within 10 s is `make cluster-proof`'s goal), and the killed node rejoins and catches up (its own
copy, read through the Python dqlite client after leadership is handed to it, holds every
account). Then a rolling restart of all three with zero failed calls.

Scripts/cluster_proof.py (`make cluster-proof`) runs the kill rounds many times and reports each."""

import json
import os
import subprocess
import time

from cluster import Cluster, Load, RetryingClient, rolling_restart
from conftest import ROOT, Daemon, call, metrics
from test_ops_and_cli import CLI

ANONAUTHD = os.environ.get("ANONAUTHD", str(ROOT / ".build/debug/anonauthd"))


def test_losing_the_leader_loses_no_acknowledged_write_and_the_node_catches_up(pb):
    cluster = Cluster()
    try:
        load = Load(cluster, pb)
        load.start()
        time.sleep(2)
        leader = cluster.leader()
        cluster.kill(leader)  # returns once the process is gone
        killed_at = time.monotonic()
        # Writes resume: the load's last acknowledged write is after the kill. How soon is
        # `make cluster-proof`'s figure (goal 10 s), not an assertion here: on a busy
        # machine an election takes longer than the goal allows.
        while load.last_write < killed_at and time.monotonic() - killed_at < 60:
            time.sleep(0.05)
        resumed = load.last_write - killed_at
        assert resumed > 0, "no write succeeded within 60 s of the kill"
        # The CLI given every node's address skips the dead one; the members and the new
        # leader as the survivors see them.
        survivor = cluster.daemons[min(cluster.daemons)]
        addresses = ",".join(f"{h}:{p}" for h, p in [cluster.killed_rpc, survivor.rpc])
        deadline = time.monotonic() + 15
        while True:
            shown = subprocess.run(
                [CLI, "admin", "cluster", "--json", "--data-dir", survivor.dir, "--rpc", addresses],
                capture_output=True, text=True, timeout=60)
            if shown.returncode == 0 or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        assert shown.returncode == 0, shown.stderr
        members = json.loads(shown.stdout)
        assert members["engine"] == "dqlite" and len(members["nodes"]) == 3, members
        assert members["leader_id"] not in (0, leader), members
        assert [n["role"] for n in members["nodes"]] == ["voter"] * 3, members
        time.sleep(1)
        cluster.start(leader)
        time.sleep(1)
        load.finish()
        total = load.verify()
        print(f"\nleader {leader} killed; writes resumed after {resumed:.2f} s; "
              f"{len(load.anonymous)} sign-ups, {len(load.email)} links acknowledged; {total} accounts")
        # The killed node's own copy holds every account.
        assert cluster.accounts_on(leader) >= len(load.anonymous)
        # /readyz is 200 on every node again.
        for daemon in cluster.daemons.values():
            assert_ready(daemon)
    finally:
        for i in list(cluster.daemons):
            cluster.kill(i)


def test_a_rolling_restart_fails_no_call_of_a_retrying_client(pb):
    cluster = Cluster()
    try:
        load = rolling_restart(cluster, pb)
        assert load.anonymous, "no load ran"
        # Keys, projects and API keys made through one node reach the others.
        client = RetryingClient(cluster, pb)
        status, reply = client.admin_call("RotateSigningKey", pb.admin.RotateSigningKeyRequest(),
                                          pb.admin.RotateSigningKeyResponse)
        assert status.code == 0, status
        client.close()
        deadline = time.monotonic() + 10
        for daemon in cluster.daemons.values():
            while reply.kid not in jwks(daemon) and time.monotonic() < deadline:
                time.sleep(0.2)
            assert reply.kid in jwks(daemon), "a rotated key did not reach every node within 10 s"
    finally:
        assert cluster.stop_all() == [0, 0, 0]


def get(daemon, path):
    import http.client
    connection = http.client.HTTPConnection(*daemon.ops, timeout=5)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, response.read().decode()
    finally:
        connection.close()


def assert_ready(daemon):
    deadline = time.monotonic() + 10
    while get(daemon, "/readyz")[0] != 200 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert get(daemon, "/readyz") == (200, "ready\n")


def jwks(daemon):
    return get(daemon, "/.well-known/jwks.json")[1]


def test_recovery_after_losing_the_majority_keeps_the_survivors_data(pb):
    """Nodes 2 and 3 are lost for good: node 1 alone cannot elect itself. The runbook's
    --cluster-recover makes it the only member, and it serves every account it had."""
    cluster = Cluster()
    try:
        client = RetryingClient(cluster, pb)
        uids = []
        for _ in range(20):
            status, reply = client.account("SignUp", pb.account.SignUpRequest(anonymous=pb.account.AnonymousSignUp()))
            assert status.code == 0, status
            uids.append(reply.local_id)
        client.close()
        for i in list(cluster.daemons):
            cluster.kill(i)
        recovered = subprocess.run(
            [ANONAUTHD, "--dev", "--data-dir", cluster.dirs[1], "--master-key-file", cluster.master_key,
             "--cluster-id", "1", "--cluster-listen", cluster.addresses[1], *cluster.tls_flags(1),
             "--cluster-recover", f"1={cluster.addresses[1]}"],
            capture_output=True, text=True, timeout=60)
        assert recovered.returncode == 0, recovered.stderr
        assert "membership recovered" in recovered.stderr
        cluster.addresses = {1: cluster.addresses[1]}
        cluster.start(1)
        client = RetryingClient(cluster, pb)
        for uid in uids:
            status, reply = client.admin_call("GetAccount", pb.admin.GetAccountRequest(
                project_id="demo-project", local_id=uid), pb.account.AccountInfo)
            assert status.code == 0, (uid, status)
        status, _ = client.account("SignUp", pb.account.SignUpRequest(anonymous=pb.account.AnonymousSignUp()))
        assert status.code == 0, status
        client.close()
    finally:
        for i in list(cluster.daemons):
            cluster.kill(i)


def test_a_member_whose_data_is_gone_is_refused_and_rejoins_under_a_new_id(pb):
    """A voter that lost its Raft log must not vote again under its id: the daemon
    refuses to start (exit 2); removed, it joins again under a new id."""
    import shutil
    cluster = Cluster()
    try:
        cluster.stop(3)
        shutil.rmtree(os.path.join(cluster.dirs[3], "cluster"))
        others = ",".join(cluster.addresses[i] for i in (1, 2))
        flags = ["--dev", "--data-dir", cluster.dirs[3], "--listen", "127.0.0.1:0", "--ops-listen", "127.0.0.1:0",
                 "--master-key-file", cluster.master_key, "--cluster-listen", cluster.addresses[3],
                 "--cluster-join", others, *cluster.tls_flags(3)]
        refused = subprocess.run([ANONAUTHD, *flags, "--cluster-id", "3"], capture_output=True, text=True,
                                 timeout=60)
        assert refused.returncode == 2, refused.stderr
        assert "is a member but its data directory is empty" in refused.stderr
        survivor = cluster.daemons[1]
        removed = subprocess.run([CLI, "admin", "cluster", "--remove", "3", "--json", "--data-dir", survivor.dir],
                                 capture_output=True, text=True, timeout=60)
        assert removed.returncode == 0, removed.stderr
        assert [n["id"] for n in json.loads(removed.stdout)["nodes"]] == [1, 2]
        cluster.addresses[4] = cluster.addresses.pop(3)
        cluster.dirs[4] = cluster.dirs.pop(3)
        cluster.start(4)
        shown = subprocess.run([CLI, "admin", "cluster", "--json", "--data-dir", survivor.dir],
                               capture_output=True, text=True, timeout=60)
        members = json.loads(shown.stdout)["nodes"]
        assert [(n["id"], n["role"]) for n in members] == [(1, "voter"), (2, "voter"), (4, "voter")], members
    finally:
        for i in list(cluster.daemons):
            cluster.kill(i)


def test_a_single_file_store_moves_onto_a_new_cluster_whole(pb):
    """Node 1 started with --cluster-id next to an existing anonauth.db copies it onto the
    new cluster: accounts, projects, keys and refresh families carry over, and the file is
    renamed so that it is never copied twice."""
    single = Daemon()
    client = RetryingClient(type("One", (), {"daemons": {1: single}})(), pb)
    uids, tokens = [], []
    for _ in range(30):
        status, reply = client.account("SignUp", pb.account.SignUpRequest(anonymous=pb.account.AnonymousSignUp()))
        assert status.code == 0, status
        uids.append(reply.local_id)
        tokens.append(reply.refresh_token)
    client.close()
    assert single.stop() == 0
    master_key = os.path.join(single.dir, "master.key")  # --dev made it; the cluster needs it named
    cluster = Cluster(size=1)  # the harness's own node 1 is replaced by the seeded one
    try:
        cluster.kill(1)
        cluster.dirs[1] = single.dir
        cluster.master_key = master_key
        cluster.start(1)
        assert not os.path.exists(os.path.join(single.dir, "anonauth.db"))
        assert os.path.exists(os.path.join(single.dir, "anonauth.db.copied-to-cluster"))
        client = RetryingClient(cluster, pb)
        for uid in uids:
            status, _ = client.admin_call("GetAccount", pb.admin.GetAccountRequest(
                project_id="demo-project", local_id=uid), pb.account.AccountInfo)
            assert status.code == 0, (uid, status)
        # The per-kind counts are made again from the copied accounts, not copied on top
        # of what the triggers counted while the accounts arrived.
        status, listed = client.admin_call("ListAccounts", pb.admin.ListAccountsRequest(
            project_id="demo-project", page_size=1), pb.admin.ListAccountsResponse)
        assert status.code == 0 and listed.total == len(uids), (status, listed.total)
        for token in tokens[:5]:
            status, _ = client.account("RefreshToken", pb.account.RefreshTokenRequest(refresh_token=token))
            assert status.code == 0, status
        client.close()
        assert "single-file store copied" in cluster.daemons[1].log_lines_text()
    finally:
        for i in list(cluster.daemons):
            cluster.kill(i)


def test_a_minority_refuses_writes_instead_of_diverging(pb):
    """Two of three nodes gone: the one left cannot commit (Raft needs a majority), so
    its writes answer STORE_UNAVAILABLE and its /readyz turns 503; nothing it was asked
    to write appears once the others are back."""
    cluster = Cluster()
    try:
        client = RetryingClient(cluster, pb)
        status, _ = client.account("SignUp", pb.account.SignUpRequest(anonymous=pb.account.AnonymousSignUp()))
        assert status.code == 0, status
        client.close()
        for i in (2, 3):
            cluster.kill(i)
        alone = cluster.daemons[1]
        deadline = time.monotonic() + 30
        while get(alone, "/readyz")[0] != 503 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert get(alone, "/readyz")[0] == 503
        sock = alone.connect()
        try:
            sock.settimeout(30)
            status, _ = call(sock, pb, "/anonauth.v1.AccountService/SignUp",
                             pb.account.SignUpRequest(anonymous=pb.account.AnonymousSignUp()),
                             pb.account.AuthResponse, metadata={"x-api-key": alone.client_json["api_key"]})
        finally:
            sock.close()
        assert (status.code, status.reason) == (14, "STORE_UNAVAILABLE"), status
        for i in (2, 3):
            cluster.start(i)
        client = RetryingClient(cluster, pb)
        status, reply = client.admin_call("ListAccounts", pb.admin.ListAccountsRequest(
            project_id="demo-project", page_size=100), pb.admin.ListAccountsResponse)
        client.close()
        assert status.code == 0 and len(reply.accounts) == 1, (status, len(reply.accounts))
    finally:
        for i in list(cluster.daemons):
            cluster.kill(i)


def test_a_batch_of_sign_ups_waits_for_the_leader_three_times(pb):
    """Nothing in an anonymous sign-up's job waits for the leader (the quota and the
    clean-up switch are decided by its statements), and the writer waits for all of a
    batch's answers at once: a batch waits three times (BEGIN, the answers, COMMIT),
    whatever its size, where a sign-up used to wait 9 times. Sign-ups one at a time;
    another write of the daemons adds its transaction and at most 3 waits of its own."""
    cluster = Cluster()
    try:
        client = RetryingClient(cluster, pb)
        status, _ = client.account("SignUp", pb.account.SignUpRequest(anonymous=pb.account.AnonymousSignUp()))
        assert status.code == 0, status  # the statements are prepared on the writer's link
        # Each daemon's writer sends its SQL to the leader: the counters of all three.
        before = [metrics(d) for d in cluster.daemons.values()]
        count = 10
        for _ in range(count):
            status, _ = client.account("SignUp", pb.account.SignUpRequest(anonymous=pb.account.AnonymousSignUp()))
            assert status.code == 0, status
        client.close()
        after = [metrics(d) for d in cluster.daemons.values()]

        def delta(name):
            return sum(a.get(name, 0.0) - b.get(name, 0.0) for a, b in zip(after, before))
        writes = delta("anonauth_store_writes_total")
        transactions = delta("anonauth_store_transactions_total")
        round_trips = delta("anonauth_store_writer_round_trips_total")
        requests = delta("anonauth_store_writer_requests_total")
        assert writes >= count, writes
        assert round_trips <= 3 * transactions + 3 * (writes - count), (round_trips, writes, transactions)
        assert requests >= 7 * count, (requests, writes, transactions)
    finally:
        for i in list(cluster.daemons):
            cluster.kill(i)
