"""The Dockerfile lints clean and installs what the tests ran against."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCKERFILE = ROOT / "Dockerfile"


def test_the_dockerfile_lints_clean_with_hadolint():
    hadolint = Path(sys.executable).parent / "hadolint"
    result = subprocess.run(
        [str(hadolint), str(DOCKERFILE)], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_image_is_the_pinned_airflow_and_python_installed_like_the_tests():
    text = DOCKERFILE.read_text()
    airflow = re.search(r"^apache-airflow==(\S+)$", (ROOT / "constraints.txt").read_text(), re.M)
    python = f"{sys.version_info.major}.{sys.version_info.minor}"
    assert airflow is not None
    assert f"FROM apache/airflow:{airflow.group(1)}-python{python}\n" in text
    # The same installation script (and so the same constraints) as scripts/bootstrap.sh.
    assert "RUN scripts/install.sh python" in text
    assert "scripts/install.sh" in (ROOT / "scripts" / "bootstrap.sh").read_text()
    assert re.search(r"^USER 50000$", text, re.M) and text.rstrip().endswith("/opt/airflow")
