"""The distribution lists every package that exists in the source folders."""

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_source_package_is_in_pyproject():
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    mapping = cfg["package-dir"]
    listed = set(cfg["packages"])
    found = set()
    for top, folder in mapping.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder)
            found.add(".".join([top, *rel.parts]))
    assert found == listed, f"missing from pyproject: {sorted(found - listed)}; stale: {sorted(listed - found)}"


def test_gitignore_does_not_hide_source_folders():
    import subprocess

    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True)
    if tracked.returncode != 0:
        return  # not a git checkout (e.g. an sdist): nothing to compare
    names = set(tracked.stdout.split())
    for init in ROOT.glob("*/**/__init__.py"):
        rel = str(init.relative_to(ROOT))
        if ".venv" in rel or "build" in rel.split("/")[0]:
            continue
        ignored = subprocess.run(["git", "check-ignore", "-q", rel], cwd=ROOT).returncode == 0
        assert not ignored, f"{rel} is ignored by .gitignore"
