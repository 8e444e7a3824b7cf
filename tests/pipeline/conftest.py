import shutil
from pathlib import Path

import pytest

from evalkit.pipeline import run_subject

FIXTURES = Path(__file__).parent / "fixtures"
RUN_AT = "2026-12-01T00:00:00Z"


@pytest.fixture(scope="session")
def fixture_subject(tmp_path_factory) -> Path:
    """The XSS-laden fixture subject, copied so runs never write into the repository."""
    dest = tmp_path_factory.mktemp("subject") / "subject"
    shutil.copytree(FIXTURES / "subject", dest)
    return dest / "subject.yaml"


@pytest.fixture(scope="session")
def overview_run(fixture_subject, tmp_path_factory) -> Path:
    """One run of the overview notebook on the fixture subject."""
    out = tmp_path_factory.mktemp("runs") / "first"
    manifest = run_subject(fixture_subject, out, at=RUN_AT)
    assert [n.status for n in manifest.notebooks] == ["ok"], manifest.notebooks
    return out
