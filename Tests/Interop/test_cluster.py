"""The replicated store, black box: three daemons on loopback ports, each with its own
data dir and dqlite node. Sign-ups, links and refreshes run from several retrying clients
while the leader's daemon is killed with SIGKILL: every acknowledged write is on the
survivors, writes resume within 10 s, and the killed node rejoins and catches up (its own
copy, read through the Python dqlite client after leadership is handed to it, holds every
account). Then a rolling restart of all three with zero failed calls.

Scripts/cluster_failover.py runs the kill rounds many times and reports each."""

import json
import os
import subprocess
import time

from cluster import Cluster, Load, RetryingClient
from conftest import ROOT
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
        # Writes resume: the load's last acknowledged write is after the kill, soon.
        while load.last_write < killed_at and time.monotonic() - killed_at < 15:
            time.sleep(0.05)
        resumed = load.last_write - killed_at
        assert resumed > 0, "no write succeeded within 15 s of the kill"
        assert resumed < 10, f"writes resumed {resumed:.1f} s after the kill"
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
        load = Load(cluster, pb, clients=3)
        load.start()
        time.sleep(1)
        for i in sorted(cluster.addresses):
            assert cluster.stop(i) == 0
            cluster.start(i)
            time.sleep(1)
        load.finish()
        load.verify()
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
             "--cluster-id", "1", "--cluster-listen", cluster.addresses[1],
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
