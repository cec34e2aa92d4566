"""A client written from Protos/ alone, in another language, calls AnonAuth."""

from conftest import call_frame, read_frame, send_frame

CHECK = "/anonauth.v1.HealthService/Check"


def test_health_check_over_python_ssl(daemon, pb):
    with daemon.connect() as s:
        assert s.selected_alpn_protocol() == "anonauth/1"
        assert s.version() == "TLSv1.3"
        req = pb.health.CheckRequest().SerializeToString()
        send_frame(s, call_frame(pb, 7, CHECK, req, {"x-request-id": "py-1"}))
        frame = read_frame(s, pb)
        assert frame.WhichOneof("kind") == "reply"
        assert frame.reply.id == 7
        assert frame.reply.status.code == 0
        assert frame.reply.metadata["x-request-id"] == "py-1"
        resp = pb.health.CheckResponse()
        resp.ParseFromString(frame.reply.payload)
        assert resp.status == "SERVING"


def test_client_without_alpn_is_accepted(daemon, pb):
    with daemon.connect(alpn=None) as s:
        assert s.selected_alpn_protocol() is None
        send_frame(s, call_frame(pb, 1, CHECK))
        assert read_frame(s, pb).reply.status.code == 0


def test_ping_gets_pong_with_same_nonce(daemon, pb):
    with daemon.connect() as s:
        f = pb.rpc.Frame()
        f.ping.nonce = 0xDEADBEEF
        send_frame(s, f.SerializeToString())
        reply = read_frame(s, pb)
        assert reply.WhichOneof("kind") == "pong"
        assert reply.pong.nonce == 0xDEADBEEF


def test_replies_match_ids_out_of_order(daemon, pb):
    with daemon.connect() as s:
        # A slow call first, then a fast one: the fast reply may come first; ids match.
        send_frame(s, call_frame(pb, 1, "/anonauth.test.TestService/Sleep", b"", {"x-sleep-ms": "300"}))
        send_frame(s, call_frame(pb, 2, CHECK))
        first = read_frame(s, pb)
        second = read_frame(s, pb)
        assert [first.reply.id, second.reply.id] == [2, 1]
        assert pb.health.CheckResponse.FromString(second.reply.payload).status == "SLEPT"


def test_ops_port_health_and_readiness(daemon):
    import http.client

    conn = http.client.HTTPConnection(*daemon.ops, timeout=5)
    conn.request("GET", "/healthz")
    assert conn.getresponse().status == 200
    conn = http.client.HTTPConnection(*daemon.ops, timeout=5)
    conn.request("GET", "/readyz")
    assert conn.getresponse().status == 200
    conn = http.client.HTTPConnection(*daemon.ops, timeout=5)
    conn.request("GET", "/metrics")
    r = conn.getresponse()
    assert r.status == 200
    assert b"anonauth_connections_total" in r.read()
