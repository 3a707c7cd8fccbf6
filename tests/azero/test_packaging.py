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
    # Data-only folders (no __init__.py) are packages too when package-data names them: setuptools
    # warns about, and will stop installing, data in a folder that `packages` does not list.
    found |= {name for name in cfg["package-data"] if _folder(name, mapping).is_dir()}
    assert found == listed, f"missing from pyproject: {sorted(found - listed)}; stale: {sorted(listed - found)}"


def _folder(package: str, mapping: dict[str, str]) -> Path:
    """The source folder of a dotted package name under pyproject's package-dir."""
    top = max((t for t in mapping if package == t or package.startswith(t + ".")), key=len)
    rest = package[len(top):].lstrip(".")
    return ROOT / mapping[top] / Path(*rest.split(".")) if rest else ROOT / mapping[top]


def test_package_data_lives_in_listed_packages():
    """A package-data pattern reaching into a subfolder makes setuptools warn that the subfolder
    is absent from `packages`; each data folder gets its own entry instead."""
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    for name, patterns in cfg["package-data"].items():
        assert name in cfg["packages"], f"package-data names {name!r}, which `packages` does not list"
        for pattern in patterns:
            assert "/" not in pattern, f"{name}: {pattern!r} reaches into a subfolder; list that folder as a package"


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
