"""The README's runnable Python snippets run as written (no placeholders)."""

import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def test_readme_quick_snippet_runs(capsys):
    snippets = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    assert snippets, "the README has a Python snippet"
    namespace = {"__name__": "readme"}
    exec(compile(snippets[0], str(README), "exec"), namespace)
    assert "markets.v1" in capsys.readouterr().out


def test_readme_avro_codec_snippet_runs(capsys):
    snippets = [snippet for snippet in re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
                if snippet.startswith("from decimal import Decimal\nfrom roastedavro import AvroCodec")]
    assert len(snippets) == 1, "the README shows AvroCodec"
    exec(compile(snippets[0], str(README), "exec"), {"__name__": "readme"})
    assert capsys.readouterr().out.startswith("0x")


def test_readme_tiers_snippet_runs(capsys, monkeypatch, tmp_path):
    # the default policy, and a cache of its own: no compiled Tick codec yet
    monkeypatch.delenv("ROASTEDAVRO_COMPILE", raising=False)
    monkeypatch.setenv("ROASTEDAVRO_CACHE_DIR", str(tmp_path))
    snippets = [snippet for snippet in re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
                if "codec.tier" in snippet]
    assert len(snippets) == 1, "the README shows the tiers"
    exec(compile(snippets[0], str(README), "exec"), {"__name__": "readme"})
    assert capsys.readouterr().out == "{'interpreter': 1, 'compiled': 0}\n"
