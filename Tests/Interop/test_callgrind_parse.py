"""Scripts/callgrind_calls.py's reading of a callgrind dump: self cost by library and
function, compressed names, and the signature's inclusive cost (its own instructions
plus those of everything it calls), on a small dump written by hand."""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "Scripts"))
import callgrind_calls  # noqa: E402

DUMP = """# callgrind format
version: 1
positions: line
events: Ir
summary: 1000

ob=(1) /usr/lib/libcrypto.so.3
fl=(1) ???
fn=(1) EVP_DigestSign
0 100
cfn=(2) bn_mul
calls=10 0
0 500
0 5

fn=(2)
0 500

ob=(2) /work/anonauthd
fl=(2) ???
fn=(3) handler
0 200
cob=(1)
cfn=(1)
calls=1 0
0 605
+3 3
ob=(3) /usr/lib/libc.so.6
fn=(4) malloc
0 40
ob=(1)
fn=(5) EVP_DigestSignInit
0 30
cfn=(4)
cob=(3)
calls=1 0
0 20
ob=(2)
fn=(3)
0 7
"""


def test_self_costs_by_library_and_function_and_the_signature_inclusive(tmp_path):
    path = tmp_path / "callgrind.out.1"
    path.write_text(DUMP)
    by_object, by_function, sign, signatures = callgrind_calls.parse(path)
    assert by_object["/usr/lib/libcrypto.so.3"] == 635
    assert by_object["/work/anonauthd"] == 210  # 200 + 3 + 7; the 605 of the call is not its own
    assert by_object["/usr/lib/libc.so.6"] == 40
    assert by_function[("/usr/lib/libcrypto.so.3", "bn_mul")] == 500
    assert by_function[("/work/anonauthd", "handler")] == 210
    # EVP_DigestSign: 100 + 5 of its own, 500 in bn_mul; EVP_DigestSignInit: 30 + 20 in malloc
    assert sign == 655
    assert sum(by_object.values()) == 885
    assert signatures == 0  # nothing calls EVP_DigestSignInit in this dump


SIGNING = """# callgrind format
version: 1
positions: line
events: Ir

ob=(1) /work/anonauthd
fl=(1) ???
fn=(1) mint
0 10
cob=(2) /usr/lib/libcrypto.so.3
cfn=(2) EVP_DigestSignInit
calls=3 0
0 300
cob=(2)
cfn=(3) EVP_DigestSign
calls=6 0
0 600
ob=(2)
fn=(2)
0 300
fn=(3)
0 600
"""


def test_signatures_are_the_calls_of_EVP_DigestSignInit_not_of_EVP_DigestSign(tmp_path):
    # Each signature calls EVP_DigestSign twice (its size, then the signature), so the
    # calls of EVP_DigestSignInit are what count tokens signed; the HTTPS sign-up's
    # callgrind figure was checked against this count (docs/benchmarks.md).
    path = tmp_path / "callgrind.out.1"
    path.write_text(SIGNING)
    _, _, sign, signatures = callgrind_calls.parse(path)
    assert signatures == 3
    assert sign == 900
