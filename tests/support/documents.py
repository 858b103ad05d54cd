"""The user documentation's code blocks, found wherever a page keeps them.

The README and the pages of ``docs/`` show DAGs and spec files a user copies. Tests run
those blocks as written; they find a block by what it holds, not by the page or section,
so moving an example between pages moves its test with it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_BLOCK = re.compile(r"^```(\w*)\n(.*?)^```$", re.M | re.S)


def user_documents() -> list[Path]:
    """The README and every page of the documentation site."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


@dataclass(frozen=True)
class CodeBlock:
    """One fenced block of a document: its language tag and its text."""

    document: Path
    language: str
    code: str

    @property
    def name(self) -> str:
        return str(self.document.relative_to(ROOT))


def code_blocks(language: str) -> list[CodeBlock]:
    """Every block tagged ``language`` in the user documents, in document order."""
    return [
        CodeBlock(document, tag, code)
        for document in user_documents()
        for tag, code in _BLOCK.findall(document.read_text())
        if tag == language
    ]


def code_block(language: str, *markers: str) -> CodeBlock:
    """The one block of ``language`` holding every marker: an example has one home."""
    found = [b for b in code_blocks(language) if all(m in b.code for m in markers)]
    assert len(found) == 1, (markers, [b.name for b in found])
    return found[0]
