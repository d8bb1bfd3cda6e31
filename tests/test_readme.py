"""The README's first Python snippet runs as written (no placeholders)."""

import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def test_readme_quick_snippet_runs(capsys):
    snippets = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    assert snippets, "the README has a Python snippet"
    namespace = {"__name__": "readme"}
    exec(compile(snippets[0], str(README), "exec"), namespace)
    assert "markets.v1" in capsys.readouterr().out
