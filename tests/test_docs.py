"""The documentation site (mkdocs.yml, docs/): its reference is what the code makes, it
builds without a warning, and every link of its pages reaches a file and a heading."""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
from pathlib import Path

import pytest
from markdown.extensions.toc import slugify

from fscommit_dev import docs_reference, mkdocs_hooks

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.rglob("*.md"))
_FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)
_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")


def test_the_reference_is_what_the_code_makes():
    """Regenerated and compared: a change to the parser, the option registry, the dag:
    keys or a docstring needs `make docs` (python -m fscommit_dev.docs_reference)."""
    made = docs_reference.pages()
    assert sorted(made) == sorted(p.name for p in (DOCS / "reference").glob("*.md"))
    assert docs_reference.stale(DOCS / "reference", made) == [], "run make docs"


def test_the_site_builds_strict_without_a_warning(tmp_path):
    """Strict mode fails on a broken link or anchor between pages, a page missing from
    the nav or a link to a folder (mkdocs.yml's validation); no warning is left either."""
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    output = built.stdout + built.stderr
    assert built.returncode == 0, output
    assert "WARNING" not in output, output
    assert (tmp_path / "reference" / "options" / "index.html").is_file()


def headings(markdown: str) -> list[str]:
    """A page's headings as text: outside code blocks, without links' targets or
    backticks."""
    text = _FENCE.sub("", markdown)
    found = re.findall(r"^#{1,6} +(.+?) *#*$", text, re.M)
    return [re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", h).replace("`", "") for h in found]


def github_anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as dashes."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(DOCS)))
def test_every_link_reaches_a_file_and_a_heading(page):
    """Links between pages, and to repository files and folders outside docs/ (which
    the site shows as paths: fscommit_dev/mkdocs_hooks.py). An anchor must be the
    heading's on the site (MkDocs' toc) and on GitHub alike, so a link works wherever the
    page is read."""
    for target in _LINK.findall(_FENCE.sub("", page.read_text())):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):
            continue  # an address
        assert not target.startswith("/"), f"{page}: {target}: an absolute link"
        path, _, fragment = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        assert linked.exists(), f"{page}: {target}: no such file"
        inside = DOCS in linked.parents
        assert linked.is_file() or not inside, f"{page}: {target}: a folder, not a page"
        if fragment:
            assert linked.suffix == ".md", f"{page}: {target}: an anchor of a non-page"
            texts = headings(linked.read_text())
            assert fragment in {slugify(h, "-") for h in texts}, f"{page}: {target}: site"
            assert fragment in {github_anchor(h) for h in texts}, f"{page}: {target}: GitHub"


def test_a_link_outside_docs_becomes_its_repository_path_on_the_site():
    page = DOCS / "how-to" / "dags.md"
    markdown = (
        "[the hourly DAG](../../dags/fscommit_hourly.py), "
        "[`dags/specs`](../../dags/specs), [triggers](../concepts/triggers.md#x), "
        "[Airflow](https://airflow.apache.org)\n"
        "```\n[kept](../../README.md)\n```\n"
    )
    assert mkdocs_hooks.unlink_outside(markdown, page, DOCS) == (
        "the hourly DAG (`dags/fscommit_hourly.py`), `dags/specs`, "
        "[triggers](../concepts/triggers.md#x), [Airflow](https://airflow.apache.org)\n"
        "```\n[kept](../../README.md)\n```\n"
    )


def test_the_dag_reference_has_one_entry_per_dag_setting():
    from airflow_provider_fscommit.core.config.spec_file import DAG_SETTINGS, DagSettings

    fields = [f.name for f in dataclasses.fields(DagSettings)]
    assert sorted(s.name for s in DAG_SETTINGS) == sorted(fields)
    reference = (DOCS / "reference" / "dag.md").read_text()
    assert all(f"| `{name}` |" in reference for name in fields)


def test_the_options_reference_lists_every_option_by_key_and_name():
    from airflow_provider_fscommit.core.config.options import OPTIONS

    reference = (DOCS / "reference" / "options.md").read_text()
    for option in OPTIONS:
        assert f"`{option.name}`" in reference, option.name
        for key in (option.key, *option.aliases, *option.key_forms):
            assert key is None or f"`{key}`" in reference, key
