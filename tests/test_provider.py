"""What the README and the reference documents promise: they parse, link and list."""

import re
from glob import glob
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_the_options_reference_lists_every_flink_option_and_the_readme_both_set_up_commands():
    from airflow_provider_fscommit.core.config.options import OPTIONS

    reference = (ROOT / "docs" / "options.md").read_text()
    for option in OPTIONS:
        if option.key:
            assert f"`{option.key}`" in reference, option.key
    readme = (ROOT / "README.md").read_text()
    commands = [line for line in readme.split("```")[1].splitlines()[1:] if line.strip()]
    assert [c.split("#")[0].strip() for c in commands] == ["make demo", "make test"]


def test_the_readme_dag_parses_and_templates_the_partition():
    from airflow_provider_fscommit.operators.compact import PartitionCompactOperator

    readme = (ROOT / "README.md").read_text()
    (snippet,) = [
        block.removeprefix("python\n")
        for block in readme.split("```")
        if block.startswith("python\n") and "PartitionCompactOperator(" in block
    ]
    namespace: dict = {}
    exec(compile(snippet, "README.md", "exec"), namespace)
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
    "document",
    ["README.md", "DEVELOPERS.md", "bench/README.md", *sorted(glob("docs/*.md", root_dir=ROOT))],
)
def test_relative_links_reach_a_file_and_a_heading(document):
    """Moving reference material between the README and docs/ must not leave dead links."""
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
    """The README's core listing: each package (``*.py`` for the core's own modules) and
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


def test_readme_layout_names_every_module_and_package():
    root = Path(__file__).resolve().parents[1]
    layout = readme_section((root / "README.md").read_text(), "Layout")
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


def test_the_readme_end_of_input_dag_parses_and_every_task_knows_the_query_ended():
    readme = (ROOT / "README.md").read_text()
    (snippet,) = [
        block.removeprefix("python\n")
        for block in readme.split("```")
        if block.startswith("python\n") and "end_of_input=True" in block
    ]
    spec = str(ROOT / "dags" / "fscommit_table.yaml")
    namespace: dict = {}
    exec(
        compile(snippet.replace("/opt/airflow/dags/events.yaml", spec), "README.md", "exec"),
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
