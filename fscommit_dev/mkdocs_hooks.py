"""MkDocs hooks of the documentation site (``mkdocs.yml``'s ``hooks``).

A page links to a repository file outside ``docs/`` by its relative path
(``[the hourly DAG](../../dags/fscommit_hourly.py)``): the link works where the Markdown is
read in the repository, and ``tests/test_docs.py`` checks that the file exists. The site
holds no such file and the project names no repository URL to send a reader to, so here,
before MkDocs validates the page's links, each such link becomes its text and the path in
the repository (``the hourly DAG (`dags/fscommit_hourly.py`)``). Every other link is left to
MkDocs' own validation (strict: a broken link or anchor between pages fails the build).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

LINK = re.compile(r"(?<!!)\[([^\]]*)\]\(([^)\s]+)\)")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)


def outside_link(target: str, page: Path, docs: Path, root: Path) -> str | None:
    """The repository path a link of ``page`` reaches outside ``docs``, else None."""
    if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith(("#", "/")):
        return None  # an address, an anchor of the page, or an absolute link
    path = target.partition("#")[0]
    resolved = Path(os.path.normpath(page.parent / path))
    if resolved == docs or docs in resolved.parents:
        return None
    return resolved.relative_to(root).as_posix() if root in resolved.parents else None


def unlink_outside(markdown: str, page: Path, docs: Path) -> str:
    """``markdown`` with its links to files outside ``docs`` written as their paths."""
    root = docs.parent

    def replace(found: re.Match[str]) -> str:
        text, target = found.groups()
        path = outside_link(target, page, docs, root)
        if path is None:
            return found.group(0)
        shown = f"`{path}`"
        return (
            shown
            if text.strip("`").rstrip("/") in (path, target.rstrip("/"))
            else (f"{text} ({shown})")
        )

    pieces, start = [], 0
    for fence in FENCE.finditer(markdown):  # code blocks are left as written
        pieces += [LINK.sub(replace, markdown[start : fence.start()]), fence.group(0)]
        start = fence.end()
    return "".join([*pieces, LINK.sub(replace, markdown[start:])])


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    docs = Path(config["docs_dir"]).resolve()
    return unlink_outside(markdown, Path(page.file.abs_src_path).resolve(), docs)
