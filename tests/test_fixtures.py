from pathlib import Path

from course_lib.fixtures import write

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def test_fixtures_regenerate_byte_identically(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    for path in write(tmp_path):
        assert path.read_bytes() == (FIXTURES / path.name).read_bytes(), f"{path.name} changed: run `make fixtures`"
