#!/usr/bin/env python3
"""fastavro's own test suite, run against roastedavro.fastavro.

    python scripts/fastavro_suite.py            # fetch, run both ways, compare; exit 1 on a gap
    python scripts/fastavro_suite.py --json F   # also write the comparison to F

The tests of fastavro FASTAVRO_VERSION come from its source distribution on
PyPI, checked against SDIST_SHA256 (pip --require-hashes), unpacked into a
git-ignored folder (build/fastavro-suite/, or $ROASTEDAVRO_FASTAVRO_SUITE_DIR).
They run twice in this Python, each in its own pytest process with the
plugin scripts/fastavro_dropin_plugin.py: once on fastavro itself (the
baseline) and once with fastavro's public functions replaced by the
drop-in's. Of the tests that pass on fastavro, every one must pass on the
drop-in except those in DIFFERENCES (deliberate, each with its reason) and
GAPS (features not built yet), both also listed in docs/fastavro.md; at least
REQUIRED of them must pass, no listed test may pass (the lists stay true),
and no call may reach fastavro's own reader or writer from roastedavro's code.

fastavro's tests import numpy, pandas, zlib_ng and lz4 (roastedavro's
``test`` extra installs them); a test that cannot run on fastavro for want of
one is not in the baseline.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from fastavro_testdata import _locked, download_sdist  # noqa: E402

FASTAVRO_VERSION = "1.13.1"
SDIST_SHA256 = "6f05aa2539bf7a19e9eb3bdaf6580c4d0f082a8230f641eaf9c84e4bcf0e6bc4"
REQUIRED = 0.98
TIMEOUT = 900

#: tests that pass on fastavro and not on the drop-in, on purpose: id -> why
#: (ids with <suite> for the folder the tests are in)
DIFFERENCES: dict[str, str] = {
    "tests/test_utils.py::test_generate_logical_types[schema0]": "fastavro.utils.generate_one gives a decimal random bytes with more digits than its "
    "precision; the drop-in refuses to write them, as Java refuses such a decimal",
    "tests/test_utils.py::test_generate_logical_types[schema1]": "the same, for a decimal on a fixed",
    "tests/test_fastavro.py::test_regular_vs_ordered_dict_map_typeerror": "asserts the lines of fastavro's own write_map in the traceback",
    "tests/test_json.py::test_union_in_array2": "fastavro's JSON writer writes the int 1234 for a string field and reads back an int; "
    "the drop-in refuses the value (DatumError naming the field)",
    "tests/test_json.py::test_custom_encoder_and_decoder": "a custom AvroJSONEncoder/AvroJSONDecoder class is fastavro's own parser-driven machinery, "
    "run by fastavro's writer and reader; the drop-in runs no data through them (TypeError)",
}


#: tests that fail on the drop-in for want of a feature not built yet: id -> what
GAPS: dict[str, str] = {}


def suite_dir() -> Path:
    configured = os.environ.get("ROASTEDAVRO_FASTAVRO_SUITE_DIR")
    base = Path(configured) if configured else HERE.parent / "build" / "fastavro-suite"
    return base / f"fastavro-{FASTAVRO_VERSION}"


def fetch(folder: Path | None = None) -> Path:
    """fastavro's tests/ and pytest.ini, unpacked once into ``folder``."""
    folder = folder or suite_dir()
    done = folder / ".unpacked"
    with _locked(folder):
        if done.exists() and done.read_text() == SDIST_SHA256:
            return folder
        with tempfile.TemporaryDirectory() as work:
            sdist = download_sdist(FASTAVRO_VERSION, SDIST_SHA256, work)
            top = f"fastavro-{FASTAVRO_VERSION}/"
            with tarfile.open(sdist) as archive:
                members = []
                for member in archive.getmembers():
                    name = member.name[len(top) :] if member.name.startswith(top) else None
                    if name and (name == "pytest.ini" or name.startswith("tests/")):
                        member.name = name
                        members.append(member)
                archive.extractall(folder, members=members, filter="data")
        done.write_text(SDIST_SHA256)
    return folder


def run(folder: Path, mode: str) -> dict:
    """One pytest run of fastavro's tests (``mode``: swap or off): the
    plugin's report (outcomes by test id, fastavro calls from roastedavro)."""
    with tempfile.TemporaryDirectory() as work:
        report = Path(work) / "report.json"
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(filter(None, [str(HERE), os.environ.get("PYTHONPATH")])),
            # some test ids follow a set's order: the same in both runs
            "PYTHONHASHSEED": "0",
        }
        completed = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                "-p",
                "fastavro_dropin_plugin",
                f"--dropin={mode}",
                f"--dropin-report={report}",
                "-o",
                "addopts=",
                "-p",
                "no:xdist",
                "--tb=line",
                "-rfE",
                "tests",
            ],
            cwd=folder,
            env=env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
        if not report.exists():
            raise RuntimeError(
                f"fastavro's tests did not run ({mode}):\n"
                f"{completed.stdout[-4000:]}{completed.stderr[-4000:]}"
            )
        result = json.loads(report.read_text())
    prefix = str(folder)
    result["outcomes"] = {
        test.replace(prefix, "<suite>"): outcome for test, outcome in result["outcomes"].items()
    }
    result["log"] = completed.stdout
    return result


def compare(baseline: dict, dropin: dict) -> dict:
    passing = sorted(test for test, outcome in baseline["outcomes"].items() if outcome == "passed")
    failing = [test for test in passing if dropin["outcomes"].get(test) != "passed"]
    listed = {**DIFFERENCES, **GAPS}
    unlisted = [test for test in failing if test not in listed]
    stale = [test for test in listed if test not in failing]
    passed = len(passing) - len(failing)
    return {
        "fastavro": FASTAVRO_VERSION,
        "passing_on_fastavro": len(passing),
        "passing_on_dropin": passed,
        "share": passed / len(passing) if passing else 0.0,
        "listed_differences": sorted(set(failing) & set(DIFFERENCES)),
        "gaps": sorted(set(failing) & set(GAPS)),
        "unlisted_failures": unlisted,
        "listed_but_passing": stale,
        "fastavro_calls_from_roastedavro": dropin["fastavro_calls_from_roastedavro"],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", help="write the comparison here")
    options = parser.parse_args(argv)
    folder = fetch()
    baseline = run(folder, "off")
    dropin = run(folder, "swap")
    summary = compare(baseline, dropin)
    if options.json:
        Path(options.json).write_text(json.dumps(summary, indent=1))
    print(
        f"fastavro {FASTAVRO_VERSION}'s tests: {summary['passing_on_fastavro']} pass on "
        f"fastavro, {summary['passing_on_dropin']} of them on roastedavro.fastavro "
        f"({summary['share']:.1%}); {len(summary['listed_differences'])} listed differences, "
        f"{len(summary['gaps'])} gaps"
    )
    print(
        f"calls from roastedavro into fastavro's reader and writer: "
        f"{sum(summary['fastavro_calls_from_roastedavro'].values())}"
    )
    ok = True
    if summary["unlisted_failures"]:
        ok = False
        print("\nfailing on the drop-in, not listed in DIFFERENCES or GAPS:")
        for test in summary["unlisted_failures"]:
            print(f"  {test}")
        failures = [line for line in dropin["log"].splitlines() if line.startswith(("FAILED", "ERROR"))]
        print("\n".join(failures[:200]))
    if summary["listed_but_passing"]:
        ok = False
        print("\nlisted in DIFFERENCES or GAPS but passing (remove them):")
        for test in summary["listed_but_passing"]:
            print(f"  {test}")
    if summary["share"] < REQUIRED:
        ok = False
        print(f"\nbelow the required {REQUIRED:.0%}")
    if summary["fastavro_calls_from_roastedavro"]:
        ok = False
        print(
            f"\nroastedavro called fastavro's reader or writer: {summary['fastavro_calls_from_roastedavro']}"
        )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
