"""Scripts/check_client_graph.py on package descriptions made here: it passes a
Foundation-only library, and fails one that reaches a C or system-library target,
another package, or imports anything else (or a platform module without its guard)."""

import json
import subprocess
import sys
import tempfile

from conftest import ROOT

SCRIPT = ROOT / "Scripts/check_client_graph.py"


def run_on(targets, sources):
    """Runs the script on a package of `targets` (name -> describe fields) whose files
    under Sources/<name>/ are `sources` (path -> text)."""
    root = tempfile.mkdtemp(prefix="anonauth-graph-")
    description = {"name": "Fake", "products": [{"name": "AnonAuthClient", "targets": ["AnonAuthClient"]}],
                   "targets": []}
    for name, fields in targets.items():
        files = [path.split("/", 1)[1] for path in sources if path.startswith(name + "/")]
        description["targets"].append({"name": name, "path": f"Sources/{name}", "module_type": "SwiftTarget",
                                       "sources": files, **fields})
    for path, text in sources.items():
        subprocess.run(["mkdir", "-p", f"{root}/Sources/{path.rsplit('/', 1)[0]}"], check=True)
        with open(f"{root}/Sources/{path}", "w", encoding="utf-8") as f:
            f.write(text)
    with open(f"{root}/describe.json", "w", encoding="utf-8") as f:
        json.dump(description, f)
    return subprocess.run([sys.executable, str(SCRIPT), "--describe", f"{root}/describe.json", "--root", root],
                          capture_output=True, text=True)


CLEAN = """import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif
#if canImport(Security)
  @preconcurrency import Security
#endif
"""


def test_a_foundation_only_library_passes():
    result = run_on({"AnonAuthClient": {"target_dependencies": ["Helpers"]}, "Helpers": {}},
                    {"AnonAuthClient/Auth.swift": CLEAN + "import Helpers\n", "Helpers/H.swift": "import Foundation\n"})
    assert result.returncode == 0, result.stdout
    assert "2 target(s)" in result.stdout


def test_a_c_target_anywhere_in_the_closure_fails():
    result = run_on({"AnonAuthClient": {"target_dependencies": ["AnonAuthNet"]},
                     "AnonAuthNet": {"target_dependencies": ["COpenSSL"]},
                     "COpenSSL": {"module_type": "SystemLibraryTarget", "type": "system-target"}},
                    {"AnonAuthClient/Auth.swift": "import AnonAuthNet\n", "AnonAuthNet/N.swift": "import COpenSSL\n"})
    assert result.returncode == 1
    assert "COpenSSL: a SystemLibraryTarget, not Swift" in result.stdout
    assert "import COpenSSL" in result.stdout


def test_a_clang_target_fails():
    result = run_on({"AnonAuthClient": {"target_dependencies": ["CShims"]}, "CShims": {"module_type": "ClangTarget"}},
                    {"AnonAuthClient/Auth.swift": CLEAN})
    assert result.returncode == 1
    assert "CShims: a ClangTarget" in result.stdout


def test_another_packages_product_fails():
    result = run_on({"AnonAuthClient": {"product_dependencies": ["NIO"]}}, {"AnonAuthClient/Auth.swift": CLEAN})
    assert result.returncode == 1
    assert "another package's product NIO" in result.stdout


def test_linux_only_and_other_imports_fail():
    result = run_on({"AnonAuthClient": {}}, {
        "AnonAuthClient/A.swift": "import Foundation\nimport Glibc\n",
        "AnonAuthClient/B.swift": "@testable import AnonAuthWire\nimport struct Dispatch.DispatchTime\n",
        "AnonAuthClient/C.swift": "#if os(Linux)\nimport FoundationNetworking\n#endif\n",
        "AnonAuthClient/D.swift": "#if canImport(Security)\n#else\nimport Security\n#endif\n",
    })
    assert result.returncode == 1
    for expected in ["A.swift:2: import Glibc", "B.swift:1: import AnonAuthWire", "B.swift:2: import Dispatch",
                     "C.swift:2: import FoundationNetworking outside #if canImport(FoundationNetworking)",
                     "D.swift:3: import Security outside"]:
        assert expected in result.stdout, result.stdout
