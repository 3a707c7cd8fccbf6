"""The README's cluster recipe, for real: two Ray nodes started with `ray start` on this machine,
token authentication on, a tiny tic-tac-toe run across both, then exactly those nodes stopped.

Ray's GCS and raylets listen on every interface whatever --node-ip-address says (Ray 2.60), so
the nodes run in a network namespace of their own that has only a loopback interface
(`unshare --net`), and in a PID namespace with its own /proc (`--pid --fork --kill-child
--mount-proc`): when the script ends, the kernel ends every process the two nodes started, and
nothing else on the machine is touched.
Skips with its reason where namespaces cannot be made (not root, no unshare) or where a second
node cannot start.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
import uuid

import pytest

SKIP = 77

SCRIPT = textwrap.dedent('''
    import os, secrets, subprocess, sys, tempfile
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    # the recipe: one token for the whole cluster, in every node's environment and the driver's
    os.environ.update(RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=secrets.token_hex(32))
    env = dict(os.environ)
    ray = [os.path.join(os.path.dirname(sys.executable), "ray")]
    tmp = tempfile.mkdtemp(prefix=sys.argv[1])
    head = subprocess.run(ray + ["start", "--head", "--node-ip-address=127.0.0.1", "--port=6390",
                                 f"--temp-dir={tmp}", "--num-cpus=2", "--include-dashboard=false",
                                 "--disable-usage-stats"], env=env, capture_output=True, text=True)
    if head.returncode != 0:
        print("SKIP: the head node did not start:", head.stderr[-400:]); sys.exit(%(skip)d)
    node = subprocess.run(ray + ["start", "--address=127.0.0.1:6390", "--node-ip-address=127.0.0.1",
                                 "--num-cpus=2", "--disable-usage-stats"], env=env, capture_output=True, text=True)
    if node.returncode != 0:
        print("SKIP: a second node could not join:", node.stderr[-400:]); sys.exit(%(skip)d)
    run = subprocess.run([sys.executable, "-m", "azero.cli", "selfplay", "--game", "tictactoe",
                          "--run-dir", os.path.join(tmp, "run"), "run.runner=ray",
                          "run.ray_address=127.0.0.1:6390", "run.workers=2", "train.steps=20",
                          "run.log_every_s=1", "model.blocks=1", "model.channels=16", "model.value_hidden=16",
                          "search.simulations=8", "selfplay.games_in_parallel=16", "replay.min_positions=100"],
                         env=env, capture_output=True, text=True, timeout=600)
    print(run.stdout[-3000:]); print(run.stderr[-3000:], file=sys.stderr)
    import ray as ray_api
    ray_api.init(address="127.0.0.1:6390", log_to_driver=False)
    print("alive nodes:", sum(1 for n in ray_api.nodes() if n["Alive"]))
    ray_api.shutdown()
    sys.exit(run.returncode)
''') % {"skip": SKIP}


def _namespaces_available() -> str | None:
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        return "needs unshare and ip (util-linux, iproute2)"
    probe = subprocess.run(["unshare", "--net", "--pid", "--fork", "--kill-child", "--mount-proc", "true"],
                           capture_output=True,
                           text=True)
    if probe.returncode != 0:
        return f"cannot make network and PID namespaces here: {probe.stderr.strip()[:200]}"
    return None


@pytest.mark.timeout(900)
def test_two_ray_nodes_with_token_auth_run_a_selfplay_job(tmp_path):
    pytest.importorskip("ray")
    reason = _namespaces_available()
    if reason:
        pytest.skip(reason)
    script = tmp_path / "cluster.py"
    script.write_text(SCRIPT)
    marker = f"azero-ray-{uuid.uuid4().hex[:12]}-"  # names this test's node folders, not another suite's
    r = subprocess.run(["unshare", "--net", "--pid", "--fork", "--kill-child", "--mount-proc", sys.executable,
                        str(script), marker], capture_output=True, text=True, timeout=800)
    if r.returncode == SKIP:
        pytest.skip(r.stdout.strip()[-300:])
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    assert "done: 20 train steps" in r.stdout, out
    assert "alive nodes: 2" in r.stdout, out
    assert "Token authentication is" not in out  # the mode is set: no warning either way
    # The PID namespace ended with the script: no process of those nodes is left anywhere.
    left = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True)
    assert left.stdout.strip() == "", left.stdout
