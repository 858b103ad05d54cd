"""What the README and the user documents promise: their examples parse, their links
resolve, and the README stays a front door."""

import re
from pathlib import Path

import pytest

from tests.support.documents import code_block, user_documents

ROOT = Path(__file__).resolve().parents[1]


def test_every_make_command_the_readme_gives_is_a_makefile_target():
    readme = (ROOT / "README.md").read_text()
    targets = set(re.findall(r"^([\w-]+):", (ROOT / "Makefile").read_text(), re.M))
    given = set(re.findall(r"^make ([\w-]+)", readme, re.M))
    assert {"demo", "test", "docs"} <= given <= targets


def test_the_readme_is_a_front_door_not_a_test_report():
    """What a user reads first fits in a sitting; how the suite proves things is in
    DEVELOPERS.md, not in the user documents."""
    readme = (ROOT / "README.md").read_text()
    assert len(readme.split()) <= 2600
    for document in user_documents():
        assert "the suite" not in document.read_text().lower(), document


def test_the_documented_compaction_dag_parses_and_templates_the_partition():
    from airflow_provider_fscommit.operators.compact import PartitionCompactOperator

    example = code_block("python", "PartitionCompactOperator(", "with DAG(")
    namespace: dict = {}
    exec(compile(example.code, example.name, "exec"), namespace)
    (task,) = namespace["dag"].tasks
    assert isinstance(task, PartitionCompactOperator)
    assert "partitions" in task.template_fields
    assert task.table["table_path"] == "s3://lake/tables/events"


def readme_section(readme: str, heading: str) -> str:
    start = readme.index(f"\n## {heading}\n")
    return readme[start : readme.index("\n## ", start + 1)]


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as dashes."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


@pytest.mark.parametrize(
    "document", ["README.md", "SECURITY.md", "DEVELOPERS.md", "ARCHITECTURE.md", "bench/README.md"]
)
def test_relative_links_reach_a_file_and_a_heading(document):
    """Moving material between these and docs/ must not leave dead links (the site's own
    pages are checked with its build, in tests/test_docs.py)."""
    source = ROOT / document
    for target in re.findall(r"\]\(([^)\s]+)\)", source.read_text()):
        if re.match(r"[a-z]+:", target):
            continue  # an external address
        path, _, fragment = target.partition("#")
        linked = (source.parent / path).resolve() if path else source
        assert linked.exists(), f"{document}: {target}"
        if fragment:
            headings = re.findall(r"^#+ (.+)$", linked.read_text(), re.M)
            assert fragment in {anchor(h) for h in headings}, f"{document}: {target}"


def test_readme_contents_link_every_section():
    readme = (ROOT / "README.md").read_text()
    headings = [line[3:] for line in readme.splitlines() if line.startswith("## ")]
    contents = readme_section(readme, "Contents").splitlines()
    linked = [line[3 : line.index("](")] for line in contents if line.startswith("- [")]
    assert linked == [h for h in headings if h != "Contents"]


def core_layout(layout: str) -> dict[str, set[str]]:
    """The architecture's core listing: each package (``*.py`` for the core's own modules) and
    its modules; comments in parentheses are left out."""
    listing: dict[str, set[str]] = {}
    block = layout[layout.index("core/") : layout.index("cli/")].splitlines()[1:]
    for line in block:
        heading = re.match(r" {4}(\S+?)/?\s{2,}(.*)", line)
        if heading:
            package, line = heading.groups()
        names = re.sub(r"\([^)]*\)", "", line)
        listing.setdefault(package, set()).update(n for n in re.split(r"[\s,]+", names) if n)
    return listing


def test_the_layout_names_every_module_and_package():
    root = Path(__file__).resolve().parents[1]
    layout = readme_section((root / "ARCHITECTURE.md").read_text(), "Layout")
    package = root / "airflow_provider_fscommit"
    assert core_layout(layout) == {
        directory.name if directory.name != "core" else "*.py": {
            module.stem for module in directory.glob("*.py") if module.name != "__init__.py"
        }
        for directory in [package / "core", *(package / "core").glob("*/")]
        if (directory / "__init__.py").exists()
    }
    for entry in package.iterdir():
        if entry.is_dir() and (entry / "__init__.py").exists():
            assert f"{entry.name}/" in layout, entry.name
        elif entry.suffix == ".py" and entry.name not in ("__init__.py", "get_provider_info.py"):
            assert entry.name in layout, entry.name


def test_the_documented_end_of_input_dag_parses_and_every_task_knows_the_query_ended():
    example = code_block("python", "end_of_input=True", "SparkSubmitOperator(")
    spec = str(ROOT / "dags" / "fscommit_table.yaml")
    namespace: dict = {}
    exec(
        compile(example.code.replace("/opt/airflow/dags/events.yaml", spec), example.name, "exec"),
        namespace,
    )
    dag = namespace["dag"]
    fscommit = [t for t in dag.tasks if t.task_id != "load"]
    assert {t.task_id for t in fscommit} == {
        "partition_commit.wait",
        "partition_commit.discover",
        "partition_commit.compact",
        "partition_commit.commit",
    }
    tables = [
        t.partial_kwargs["table"] if hasattr(t, "partial_kwargs") else t.table for t in fscommit
    ]
    assert all(table["end_of_input"] is True for table in tables)
    assert dag.get_task("load").downstream_task_ids == {"partition_commit.wait"}
