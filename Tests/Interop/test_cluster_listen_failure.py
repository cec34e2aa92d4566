"""A node whose cluster listen fails exits at once with exit 2 and a message naming the
address, instead of waiting for ever (libdqlite 1.11's dqlite_node_start waits for a
node thread that failed to listen). The bound below only stops a hang."""

import os
import socket
import subprocess
import tempfile

import pytest

from cluster import free_port
from conftest import ROOT

ANONAUTHD = os.environ.get("ANONAUTHD", str(ROOT / ".build/debug/anonauthd"))


def start_node(listen, tls):
    """A node 1 on `listen`, with the TLS gateway on it (--dev's cluster certificates) or
    the node itself (--cluster-insecure)."""
    root = tempfile.mkdtemp(prefix="anonauth-listen-")
    key = os.path.join(root, "master.key")
    with open(key, "wb") as f:
        f.write(os.urandom(32))
    os.chmod(key, 0o600)
    data = os.path.join(root, "data")
    os.makedirs(data, mode=0o700)
    return subprocess.run(
        [ANONAUTHD, "--dev", "--data-dir", data, "--listen", "127.0.0.1:0", "--ops-listen", "127.0.0.1:0",
         "--master-key-file", key, "--cluster-id", "1", "--cluster-listen", listen,
         *([] if tls else ["--cluster-insecure"])],
        capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("tls", [True, False], ids=["tls", "insecure"])
def test_a_cluster_port_taken_by_another_listener_exits_2_naming_it(tls):
    port = free_port()
    with socket.socket() as holder:
        holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        holder.bind(("127.0.0.1", port))
        holder.listen(1)
        done = start_node(f"127.0.0.1:{port}", tls)
    assert done.returncode == 2, done.stderr[-2000:]
    assert f"cannot listen on 127.0.0.1:{port}" in done.stderr, done.stderr[-2000:]
    assert "Address already in use" in done.stderr, done.stderr[-2000:]


@pytest.mark.parametrize("tls", [True, False], ids=["tls", "insecure"])
def test_a_cluster_address_not_on_this_machine_exits_2_naming_it(tls):
    done = start_node("192.0.2.1:9001", tls)  # TEST-NET-1: never a local address
    assert done.returncode == 2, done.stderr[-2000:]
    assert "cannot listen on 192.0.2.1:9001" in done.stderr, done.stderr[-2000:]
