# The torch fast path with a stand-in torch (fake_torch_check.py), in a
# process of its own: the extension remembers the torch it found.
import subprocess
import sys

from conftest import ROOT


def test_torch_fast_path_with_a_stand_in_torch(tmp_path):
    r = subprocess.run(
        [sys.executable, str(ROOT / "tests/python/fake_torch_check.py"), str(ROOT), str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip() == "fast path ok"
