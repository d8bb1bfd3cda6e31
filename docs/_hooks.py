"""MkDocs hook: the README is the site's front page, and the repository files
the pages link to (benchmark results and charts, examples, CONTRIBUTING and
CHANGELOG) are served with the site at the paths they have in the repository,
so one link works in both places."""

from pathlib import Path

from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parent.parent
SHARED = [
    "CONTRIBUTING.md",
    "CHANGELOG.md",
    "benchmarks/README.md",
    "benchmarks/results",
    "examples",
    "roastedavro/codetext.py",
]


def on_files(files, config):
    files.append(File.generated(config, "index.md", abs_src_path=str(ROOT / "README.md")))
    for name in SHARED:
        path = ROOT / name
        for item in sorted(path.rglob("*") if path.is_dir() else [path]):
            if item.is_file() and "__pycache__" not in item.parts:
                relative = item.relative_to(ROOT).as_posix()
                if files.get_file_from_path(relative) is None:
                    files.append(File(relative, str(ROOT), config["site_dir"], config["use_directory_urls"]))
    return files


def on_page_markdown(markdown, page, config, files):
    if page.file.src_uri == "index.md":
        # the README links into docs/; on the site, the pages are its siblings
        markdown = markdown.replace("](docs/", "](")
    return markdown
