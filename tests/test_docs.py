"""The documentation: every Python example in the README and in docs/ runs as
written, every relative link and anchor resolves, and the site builds with
warnings as errors.

A page's examples run in order in one namespace, from a temporary folder that
holds a copy of ``examples/schemas`` at that path (the ``.avsc`` files the
examples load, by their paths from the repository's root).
Hidden code the reader does not see (the setting an example assumes, or checks
of what it printed) sits in HTML comments that MkDocs and GitHub do not show::

    <!-- test
    assert captured().startswith("0x")
    -->

It runs at its place between the examples, with ``monkeypatch``, ``tmp_path``
and ``captured()`` (the output printed so far) in its namespace.
"""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]
# a fenced Python example, or hidden test code
PIECE = re.compile(r"^```python\n(?P<example>.*?)^```$|^<!-- test\n(?P<hidden>.*?)^-->$", re.S | re.M)


def pieces(page: Path) -> list[tuple[str, int, str]]:
    """(kind, line, code) of each example and hidden test block, in page order."""
    text = page.read_text()
    found = []
    for match in PIECE.finditer(text):
        kind = "example" if match.group("example") is not None else "hidden"
        code = match.group(kind)
        line = text.count("\n", 0, match.start(kind)) + 1
        found.append((kind, line, code))
    return found


RUNNABLE = [page for page in PAGES if any(kind == "example" for kind, _, _ in pieces(page))]


@pytest.mark.parametrize("page", RUNNABLE, ids=lambda page: page.relative_to(ROOT).as_posix())
def test_the_examples_of_a_page_run(page, tmp_path, monkeypatch, capsys):
    shutil.copytree(ROOT / "examples" / "schemas", tmp_path / "examples" / "schemas")
    monkeypatch.chdir(tmp_path)
    # the schema classes and encoders a page declares are the page's own: the
    # registries by name are put back afterwards (a page's ShapeSchema must not
    # make another test's Nested("ShapeSchema") ambiguous)
    from marshmallow import class_registry

    from roastedavro.encoders import default_registry

    monkeypatch.setattr(
        class_registry,
        "_registry",
        {name: list(classes) for name, classes in class_registry._registry.items()},
    )
    monkeypatch.setattr(default_registry, "_by_field_class", dict(default_registry._by_field_class))
    printed = []

    def captured() -> str:
        printed.append(capsys.readouterr().out)
        return "".join(printed)

    namespace = {
        "__name__": "docs_example",
        "monkeypatch": monkeypatch,
        "tmp_path": tmp_path,
        "captured": captured,
    }
    for kind, line, code in pieces(page):
        # line numbers in tracebacks are the page's own
        source = "\n" * (line - 1) + code
        exec(compile(source, f"{page.relative_to(ROOT)} ({kind})", "exec"), namespace)


# -- links ---------------------------------------------------------------------------

LINK = re.compile(r"\]\((?P<target>[^)\s]+)\)")


def anchors(page: Path) -> set[str]:
    from pymdownx.slugs import slugify

    slug = slugify(case="lower")
    found, inside = set(), False
    for line in page.read_text().splitlines():
        if line.startswith("```"):
            inside = not inside
        elif not inside and (heading := re.match(r"#+ (.*)", line)):
            plain = re.sub(r"[`*]|\[([^]]*)\]\([^)]*\)", r"\1", heading.group(1))
            found.add(slug(plain, "-"))
    return found


@pytest.mark.parametrize("page", [ROOT / "README.md", ROOT / "CONTRIBUTING.md"], ids=lambda page: page.name)
def test_the_links_of_the_repository_pages_resolve(page):
    # docs/ is checked by the site's build; these pages are read in the repository
    pytest.importorskip(
        "pymdownx", reason="the link check uses the docs extra's slugs (pip install '.[docs]')"
    )
    broken = []
    for match in LINK.finditer(page.read_text()):
        target = match.group("target")
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path) if path else page
        if not file.exists():
            broken.append(target)
        elif anchor and file.suffix == ".md" and anchor not in anchors(file):
            broken.append(target)
    assert not broken, f"{page.name} links to what is not there: {broken}"


# -- the site ------------------------------------------------------------------------


def test_the_site_builds_with_warnings_as_errors(tmp_path):
    pytest.importorskip("mkdocs", reason="the site needs the docs extra (pip install '.[docs]')")
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env=dict(os.environ, NO_MKDOCS_2_WARNING="1"),
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / "site" / "reference" / "index.html").exists()
    # the API reference is made from the docstrings, not empty
    assert "AvroCodec" in (tmp_path / "site" / "reference" / "index.html").read_text()
