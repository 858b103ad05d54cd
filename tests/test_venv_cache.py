"""The compatibility suites' venv cache (tests/support/pythons.py) keeps one build of this
tree's wheel: each edit of the package makes a new 1.2 GB build, and a day of them filled
the disk CI runs on."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from fscommit_dev.streams import ROOT
from tests.support import pythons

# A process building (an empty folder for) a venv of ``kind`` from ``inputs``, which
# holds it until its stdin closes when told to.
BUILD = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from tests.support.pythons import installed_venv

    inputs, kind, hold = sys.argv[1:]
    install = lambda venv: (venv / "bin").mkdir(parents=True)
    installed_venv(Path(sys.executable), inputs, install, Path("unused"), kind=kind)
    print("built", flush=True)
    if hold == "hold":
        sys.stdin.read()
    """
)


def build(inputs: str, kind: str, hold: bool = False) -> subprocess.Popen:
    process = subprocess.Popen(
        [sys.executable, "-c", BUILD, inputs, kind, "hold" if hold else "exit"],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout.readline() == "built\n"
    return process


def test_a_new_build_of_a_kind_deletes_the_earlier_ones_no_run_is_using(tmp_path, monkeypatch):
    cache = tmp_path / "venvs"
    monkeypatch.setenv("FSCOMMIT_VENV_CACHE", str(cache))
    monkeypatch.setattr(pythons, "_held", {})  # this test's holds end with it

    def entries() -> set[str]:
        return {entry.name for entry in cache.iterdir() if entry.is_dir()}

    build("edit 1", "packaging").wait(timeout=60)
    (first,) = entries()
    running = build("edit 2", "packaging", hold=True)
    (second,) = entries()  # the first edit's build is gone: nothing ran it
    assert second != first
    build("a deployment", "airflow line").wait(timeout=60)
    (other,) = entries() - {first, second}

    try:
        newest = pythons.installed_venv(
            Path(sys.executable),
            "edit 3",
            lambda venv: (venv / "bin").mkdir(parents=True),
            tmp_path / "unused",
            kind="packaging",
        )
        # The second edit's build is kept while a run holds it, as is every build
        # of another kind.
        assert entries() == {second, other, newest.parent.parent.parent.name}
    finally:
        running.communicate("", timeout=60)

    # Once that run ends, the next build of the kind deletes its build too; this
    # process still holds the third edit's.
    build("edit 4", "packaging").wait(timeout=60)
    assert len(entries()) == 3 and second not in entries() and other in entries()
