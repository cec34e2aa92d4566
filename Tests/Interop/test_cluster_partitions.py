"""Partitions, really cut: three daemons, each node on its own loopback address behind a
proxy the test controls (partition_proxy.py), links between nodes cut while the RPC
ports stay open to clients.

- A node cut from the other two (the leader, the hardest case; its links reset, or
  blackholed so that only timeouts tell) refuses writes with
  STORE_UNAVAILABLE and its /readyz says 503, while the other two keep serving; an email
  linked on both sides at once is acknowledged on one side only; after healing every node
  holds every acknowledged sign-up and answers reads of the others' writes.
- A node cut from the leader alone (not from the third node, nor from its clients)
  answers STORE_UNAVAILABLE or serves through a leader it reaches, never a stale answer.
- Links that flap (cut and blackholed, in turn, on random nodes) under retrying sign-up
  load: nothing acknowledged is lost and writes resume once they stop.

Waits are on conditions, with generous bounds that only stop a hang."""

import time

import pytest

from cluster import ACCOUNT, UNAVAILABLE, Cluster, Load, RetryingClient
from conftest import call
from partition_proxy import BLACKHOLE, CUT, Flapper
from test_cluster import get


def sign_up(daemon, pb):
    """One anonymous sign-up on this daemon, no retry: (status, reply)."""
    return account_call(daemon, pb, "SignUp", pb.account.SignUpRequest(anonymous=pb.account.AnonymousSignUp()),
                        pb.account.AuthResponse)


def account_info(daemon, pb, id_token):
    """GetAccountInfo on this daemon, no retry: (status, reply)."""
    return account_call(daemon, pb, "GetAccountInfo", pb.account.GetAccountInfoRequest(id_token=id_token),
                        pb.account.AccountInfo)


def account_call(daemon, pb, method, request, response):
    """One AccountService call on this daemon on a connection of its own, no retry."""
    sock = daemon.connect()
    sock.settimeout(60)
    try:
        return call(sock, pb, ACCOUNT + method, request, response,
                    metadata={"x-api-key": daemon.client_json["api_key"]})
    finally:
        sock.close()


def wait_for(predicate, within, what):
    deadline = time.monotonic() + within
    while not predicate():
        assert time.monotonic() < deadline, f"not within {within} s: {what}"
        time.sleep(0.1)


class Only:
    """A cluster as seen by a client that knows some of its nodes only."""

    def __init__(self, cluster, ids):
        self.daemons = {i: cluster.daemons[i] for i in ids}


def listed_accounts(cluster, pb, i):
    """{local_id: email} as node i serves them (ListAccounts through its daemon)."""
    client = RetryingClient(Only(cluster, [i]), pb)
    try:
        return client.list_accounts()
    finally:
        client.close()


@pytest.mark.parametrize("mode", [CUT, BLACKHOLE])
def test_a_node_cut_from_the_others_refuses_writes_and_the_majority_serves(pb, mode):
    """cut: its links reset; blackhole: its links go silent (nothing is refused, every
    byte is held), so only timeouts tell the sides that the other is gone."""
    cluster = Cluster(proxied=True)
    try:
        acked = []
        minority = cluster.leader()
        majority = [i for i in sorted(cluster.daemons) if i != minority]
        # Two accounts made before the cut: each side will try to give one the same email.
        status, on_minority = sign_up(cluster.daemons[minority], pb)
        assert status.code == 0, status
        status, on_majority = sign_up(cluster.daemons[majority[0]], pb)
        assert status.code == 0, status
        acked += [on_minority.local_id, on_majority.local_id]

        cluster.network.isolate(minority, mode)
        cut_at = time.monotonic()

        # The minority side: its writes fail with STORE_UNAVAILABLE (once the old leader
        # stepped down; anything acknowledged before that must have been committed and is
        # checked after healing), and /readyz goes 503.
        refused = []

        def refuses():
            status, reply = sign_up(cluster.daemons[minority], pb)
            if status.code == 0:
                acked.append(reply.local_id)
                return False
            refused.append(status)
            return True
        wait_for(refuses, 60, "the cut node refuses a sign-up")
        refused_after = time.monotonic() - cut_at
        assert refused[-1].code == UNAVAILABLE and refused[-1].reason == "STORE_UNAVAILABLE", refused[-1]
        # 503 at once ("store not writable" after a failed write), then the watcher finds
        # no leader in reach.
        wait_for(lambda: get(cluster.daemons[minority], "/readyz") == (503, "no cluster leader reachable\n"), 30,
                 "the cut node's /readyz says no leader")
        assert get(cluster.daemons[minority], "/healthz")[0] == 200

        # The majority side elects a leader and serves sign-ups.
        client = RetryingClient(Only(cluster, majority), pb)
        served_after = None
        try:
            for _ in range(20):
                status, reply = client.account("SignUp", pb.account.SignUpRequest(
                    anonymous=pb.account.AnonymousSignUp()))
                assert status.code == 0, status
                acked.append(reply.local_id)
                served_after = served_after or time.monotonic() - cut_at
        finally:
            client.close()
        print(f"\n{mode} leader {minority}: its first refusal {refused_after:.1f} s after the cut, "
              f"the majority's first sign-up {served_after:.1f} s after")
        for i in majority:
            # A write that failed during the election leaves "store not writable" until the
            # probe that a /readyz starts succeeds.
            wait_for(lambda: get(cluster.daemons[i], "/readyz")[0] == 200, 30, f"node {i} ready")

        # One email, linked on both sides during the cut: the minority cannot commit it.
        email = "both-sides@example.com"

        def link(i, session):
            credential = pb.account.Credential(provider_id="password", email=email, password="correct horse")
            return account_call(cluster.daemons[i], pb, "LinkWithCredential", pb.account.LinkWithCredentialRequest(
                id_token=session.id_token, credential=credential), pb.account.AuthResponse)
        status, _ = link(minority, on_minority)
        assert status.code == UNAVAILABLE and status.reason == "STORE_UNAVAILABLE", status
        # The majority side through a retrying client: a pooled connection that led to the
        # old leader fails its next call once (the next one looks for the leader again).
        client = RetryingClient(Only(cluster, majority), pb)
        try:
            credential = pb.account.Credential(provider_id="password", email=email, password="correct horse")
            status, _ = client.account("LinkWithCredential", pb.account.LinkWithCredentialRequest(
                id_token=on_majority.id_token, credential=credential))
            assert status.code == 0 or (client.lost and status.reason in ("EMAIL_EXISTS", "PROVIDER_ALREADY_LINKED")), \
                status
        finally:
            client.close()
        status, _ = sign_up(cluster.daemons[minority], pb)
        assert status.reason == "STORE_UNAVAILABLE", status

        cluster.network.heal()

        # Every node converges: ready again, every acknowledged sign-up on each, the email
        # on the majority's account only, and each node's own copy as large.
        for daemon in cluster.daemons.values():
            wait_for(lambda: get(daemon, "/readyz")[0] == 200, 60, "ready after healing")
        for i in sorted(cluster.daemons):
            listed = listed_accounts(cluster, pb, i)
            missing = [uid for uid in acked if uid not in listed]
            assert missing == [], f"node {i}: {len(missing)} acknowledged sign-ups missing"
            assert listed[on_majority.local_id] == email
            assert listed[on_minority.local_id] == ""
            assert [uid for uid, e in listed.items() if e == email] == [on_majority.local_id]
        counts = {i: cluster.accounts_on(i) for i in sorted(cluster.daemons)}
        assert len(set(counts.values())) == 1 and counts[minority] >= len(acked), counts
        # The cut node answers reads of a write made on the majority side during the cut
        # (retrying: accounts_on just moved the leadership around).
        client = RetryingClient(Only(cluster, [minority]), pb)
        try:
            status, signed_in = client.account("SignInWithPassword", pb.account.SignInWithPasswordRequest(
                email=email, password="correct horse"))
        finally:
            client.close()
        assert status.code == 0 and signed_in.local_id == on_majority.local_id, status
    finally:
        for i in list(cluster.daemons):
            cluster.kill(i)
        cluster.network.close()


def test_a_node_cut_from_the_leader_only_never_answers_stale(pb):
    """Node n loses its link to the leader but keeps the third node and its clients.
    Every call it answers is answered from a leader: a sign-up it acknowledges is read
    on the other side, and an account made on the other side is never `not found` on n."""
    cluster = Cluster(proxied=True)
    try:
        leader = cluster.leader()
        node = next(i for i in sorted(cluster.daemons) if i != leader)
        third = next(i for i in sorted(cluster.daemons) if i not in (leader, node))
        cluster.network.cut(node, leader)
        answers = {"served": 0, "unavailable": 0}
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            # A write made on the other side, read at once through n.
            status, made = sign_up(cluster.daemons[third], pb)
            if status.code == 0:
                status, info = account_info(cluster.daemons[node], pb, made.id_token)
                assert status.code in (0, UNAVAILABLE), f"stale answer from the cut node: {status}"
                if status.code == UNAVAILABLE:
                    assert status.reason == "STORE_UNAVAILABLE", status
                    answers["unavailable"] += 1
                else:
                    assert info.local_id == made.local_id
                    answers["served"] += 1
            # A write acknowledged by n is there for the others.
            status, mine = sign_up(cluster.daemons[node], pb)
            if status.code == 0:
                status, info = account_info(cluster.daemons[third], pb, mine.id_token)
                assert status.code in (0, UNAVAILABLE), f"a sign-up the cut node acknowledged: {status}"
            else:
                assert status.reason == "STORE_UNAVAILABLE", status
        assert answers["served"] + answers["unavailable"] > 0, "no write succeeded on the other side"
        cluster.network.heal()
        for daemon in cluster.daemons.values():
            wait_for(lambda: get(daemon, "/readyz")[0] == 200, 60, "ready after healing")
        print(f"\ncut {node}<->{leader}: through the cut node {answers}")
    finally:
        for i in list(cluster.daemons):
            cluster.kill(i)
        cluster.network.close()


def test_flapping_links_lose_no_acknowledged_write_and_writes_resume(pb):
    cluster = Cluster(proxied=True)
    try:
        load = Load(cluster, pb, clients=3)
        load.start()
        flapper = Flapper(cluster.network, cut_seconds=2.0, healed_seconds=3.0)
        flapper.start()
        time.sleep(25)
        flapper.stop()
        healed_at = time.monotonic()
        wait_for(lambda: load.last_write > healed_at, 60, "a write acknowledged after the links stopped flapping")
        load.finish()
        total = load.verify()
        print(f"\n{len(flapper.history)} flaps {[(n, m) for n, m, _ in flapper.history]}; "
              f"{len(load.anonymous)} sign-ups, {len(load.email)} links acknowledged; {total} accounts")
        for i in sorted(cluster.daemons):
            assert cluster.accounts_on(i) == total
    finally:
        for i in list(cluster.daemons):
            cluster.kill(i)
        cluster.network.close()
