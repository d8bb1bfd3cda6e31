"""Tiers: AvroCodec serves from tier 0 at once and from the compiled codec when
it is ready; the compile policies (eager, hot, never) and ROASTEDAVRO_COMPILE;
statistics per tier; the swap under load; a machine without a C compiler."""

import io
import json
import os
import subprocess
import sys
import textwrap
import threading
import uuid
from pathlib import Path

import fastavro
import pytest

from roastedavro import compiler, tiers
from roastedavro.codec import AvroCodec
from roastedavro.errors import DatumError, DecodeError, NotCompiledError

ROOT = Path(__file__).resolve().parent.parent


def fresh_schema(tag: str = "") -> dict:
    """A schema no cache holds (its name is new)."""
    return {
        "type": "record",
        "name": f"Tiered{tag}{uuid.uuid4().hex[:12]}",
        "namespace": "tiers",
        "fields": [
            {"name": "id", "type": "long"},
            {"name": "name", "type": "string"},
            {"name": "tags", "type": {"type": "array", "items": "string"}},
            {"name": "price", "type": ["null", "double"]},
        ],
    }


VALUES = [
    {"id": n, "name": f"n{n}", "tags": ["a"] * (n % 3), "price": None if n % 2 else n / 4} for n in range(50)
]


def fastavro_bytes(schema, datum) -> bytes:
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(schema), datum)
    return out.getvalue()


@pytest.fixture
def empty_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("ROASTEDAVRO_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("ROASTEDAVRO_COMPILE", raising=False)
    return tmp_path


def modules_in(folder: Path) -> list:
    return sorted(p.name for p in folder.glob(f"*{compiler.EXT_SUFFIX}"))


def test_hot_is_the_default_and_serves_from_tier_0_without_building(empty_cache):
    schema = fresh_schema()
    codec = AvroCodec(schema)
    assert codec.policy == "hot" and codec.tier == "interpreter"
    for value in VALUES:
        data = codec.dump(value)
        assert data == fastavro_bytes(schema, value)
        assert codec.load(data) == value
    assert codec.wait_compiled(60)
    # the background lookup found nothing; below HOT_AFTER nothing is built
    assert codec.tier == "interpreter" and codec.stats["state"] == "interpreter"
    assert codec.stats["calls"] == {"interpreter": 2 * len(VALUES), "compiled": 0}
    assert modules_in(empty_cache) == []


def test_eager_compiles_before_the_first_call(empty_cache):
    schema = fresh_schema()
    codec = AvroCodec(schema, compile="eager")
    assert codec.tier == "compiled" and len(modules_in(empty_cache)) == 1
    assert codec.dump(VALUES[1]) == fastavro_bytes(schema, VALUES[1])
    assert codec.stats["calls"] == {"interpreter": 0, "compiled": 1}


def test_hot_and_never_find_a_codec_built_before(empty_cache):
    schema = fresh_schema()
    AvroCodec(schema, compile="eager")
    # another process: the same schema, its module in the cache
    code = textwrap.dedent(f"""
        import json
        from roastedavro.codec import AvroCodec
        schema = json.loads({json.dumps(json.dumps(schema))})
        never = AvroCodec(schema, compile="never")
        first = never.tier   # served at once, the lookup off the caller's path
        never.wait_compiled(60)
        hot = AvroCodec(schema, compile="hot")
        hot.wait_compiled(60)
        assert first in ("interpreter", "compiled")
        print(json.dumps([never.tier, hot.tier]))
    """)
    # not from the repository root: an installed package must not meet its source tree
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        check=True,
        cwd=empty_cache,
    )
    assert json.loads(out.stdout) == ["compiled", "compiled"]


def test_hot_builds_in_the_background_once_the_work_repays_it(empty_cache, monkeypatch):
    monkeypatch.setattr(tiers, "HOT_AFTER", 2000)
    schema = fresh_schema()
    codec = AvroCodec(schema)
    codec.wait_compiled(60)
    assert codec.tier == "interpreter"
    served = 0
    while codec.stats["state"] == "interpreter" and served < 10_000:
        assert codec.load(codec.dump(VALUES[served % 50])) == VALUES[served % 50]
        served += 1
    assert codec.stats["state"] in ("compiling", "compiled")
    assert codec.wait_compiled(120)
    stats = codec.stats
    assert stats["tier"] == "compiled" and stats["state"] == "compiled", stats
    assert stats["build_seconds"] > 0 and len(modules_in(empty_cache)) == 1
    # the instance's own entry points moved: the compiled codec serves them now
    before = stats["calls"]["compiled"]
    for value in VALUES:
        assert codec.load(codec.dump(value)) == value
    after = codec.stats["calls"]
    assert after["compiled"] == before + 2 * len(VALUES)
    assert after["interpreter"] == 2 * served


def test_never_serves_from_tier_0_and_builds_nothing(empty_cache):
    schema = fresh_schema()
    codec = AvroCodec(schema, compile="never")
    assert codec.tier == "interpreter"
    assert [codec.dump(v) for v in VALUES] == [fastavro_bytes(schema, v) for v in VALUES]
    assert codec.wait_compiled(10)
    assert modules_in(empty_cache) == []


def test_compile_never_in_the_environment_overrides_a_codecs_policy(empty_cache, monkeypatch):
    monkeypatch.setenv("ROASTEDAVRO_COMPILE", "never")
    schema = fresh_schema()
    codec = AvroCodec(schema, compile="eager")
    assert codec.policy == "never" and codec.tier == "interpreter"
    assert codec.load(codec.dump(VALUES[3])) == VALUES[3]
    with pytest.raises(NotCompiledError, match="ROASTEDAVRO_COMPILE=never"):
        codec.compile()
    assert modules_in(empty_cache) == []


@pytest.mark.parametrize(
    "mode, policy", [("eager", "eager"), ("hot", "hot"), ("auto", "hot"), ("never", "never")]
)
def test_the_environment_sets_the_default_policy(monkeypatch, mode, policy):
    monkeypatch.setenv("ROASTEDAVRO_COMPILE", mode)
    assert tiers.compile_policy() == policy
    if mode != "never":
        assert tiers.compile_policy("never") == "never"


def test_an_unknown_policy_is_refused():
    with pytest.raises(ValueError, match="compile must be one of eager, hot, never, not 'later'"):
        AvroCodec(fresh_schema(), compile="later")


def test_both_tiers_give_the_same_errors(empty_cache):
    schema = fresh_schema()
    interpreted = AvroCodec(schema, compile="never")
    compiled = AvroCodec(dict(schema), compile="eager")  # an equal schema: the same engine
    assert interpreted._read_engine is compiled._read_engine
    # the never codec was made first; the eager one built the module, and
    # both serve from it now
    assert interpreted.tier == compiled.tier == "compiled"
    other = AvroCodec(fresh_schema(), compile="never")
    for bad in (
        {"id": "x", "name": "a", "tags": [], "price": None},
        {"id": 1, "name": "a", "tags": [3], "price": None},
    ):
        with pytest.raises(DatumError) as tier0:
            other.dump(bad)
        with pytest.raises(DatumError) as tier1:
            compiled.dump(bad)
        assert str(tier0.value) == str(tier1.value)
    data = compiled.dump(VALUES[2])
    for cut in range(len(data)):
        with pytest.raises(DecodeError) as tier0:
            other.load(data[:cut])
        with pytest.raises(DecodeError) as tier1:
            compiled.load(data[:cut])
        assert (tier0.value.offset, tier0.value.reason) == (tier1.value.offset, tier1.value.reason)


def test_threads_see_only_correct_results_while_the_codec_moves_to_compiled(empty_cache, monkeypatch):
    monkeypatch.setattr(tiers, "HOT_AFTER", 20_000)
    schema = fresh_schema()
    codec = AvroCodec(schema)
    expected = [(value, fastavro_bytes(schema, value)) for value in VALUES]
    wrong: list = []
    stop = threading.Event()
    served = {"interpreter": 0, "compiled": 0}

    def hammer(offset: int) -> None:
        n = offset
        while not stop.is_set():
            value, data = expected[n % len(expected)]
            tier = codec.tier
            if codec.dump(value) != data or codec.load(data) != value:
                wrong.append((tier, value))
            served[tier] += 1
            n += 1

    threads = [threading.Thread(target=hammer, args=(k,)) for k in range(4)]
    for thread in threads:
        thread.start()
    try:
        deadline = 120
        while codec.tier != "compiled" and deadline > 0:
            codec.wait_compiled(1)
            deadline -= 1
        # some calls on the compiled codec too
        seen = served["compiled"]
        while served["compiled"] < seen + 1000 and not wrong:
            threading.Event().wait(0.01)
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    assert wrong == []
    assert codec.tier == "compiled", codec.stats
    assert served["interpreter"] > 0 and served["compiled"] > 0


def test_the_container_writer_moves_to_the_compiled_codec_between_blocks(empty_cache, monkeypatch):
    from roastedavro import container

    monkeypatch.setattr(tiers, "HOT_AFTER", 500)
    schema = fresh_schema()
    out = io.BytesIO()
    writer = container.FileWriter(out, schema, sync_interval=200)
    for value in VALUES * 4:
        writer.write(value)
    writer.flush()
    engine = AvroCodec(schema)._write_engine
    assert engine.wait(120) and engine.tier == "compiled"
    for value in VALUES * 4:
        writer.write(value)
    writer.close()
    assert engine.compiled.calls > 0
    assert list(fastavro.reader(io.BytesIO(out.getvalue()))) == VALUES * 8


# -- a machine without a C compiler --------------------------------------------------------

NO_COMPILER_SCRIPT = r"""
import io, json, logging, os, sys
logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
from roastedavro import compiler, tiers
from roastedavro.codec import AvroCodec
import roastedavro.fastavro as rfa
from roastedavro.container import FileReader, FileWriter

schema = json.loads(sys.argv[1])
values = json.loads(sys.argv[2])
out = {"can_compile": tiers.can_compile()}
codec = AvroCodec(schema)
out["codec"] = [codec.tier, [codec.load(codec.dump(v)) == v for v in values]]
eager = AvroCodec(schema, compile="eager")
out["eager"] = eager.tier
evolved = dict(schema, fields=schema["fields"] + [{"name": "extra", "type": "int", "default": 7}])
pair = AvroCodec(evolved, writer_schema=schema)
out["pair"] = [pair.tier, pair.load(codec.dump(values[0]))["extra"]]
parsed = rfa.parse_schema(schema)
buffer = io.BytesIO()
rfa.schemaless_writer(buffer, parsed, values[0])
buffer.seek(0)
out["drop_in"] = rfa.schemaless_reader(buffer, parsed) == values[0]
buffer = io.BytesIO()
rfa.writer(buffer, parsed, values, codec="deflate")
buffer.seek(0)
out["drop_in_file"] = list(rfa.reader(buffer)) == values
buffer.seek(0)
out["drop_in_file_evolved"] = [r["extra"] for r in rfa.reader(buffer, rfa.parse_schema(evolved))][:2]
buffer = io.BytesIO()
with FileWriter(buffer, schema, codec="null") as writer:
    writer.write_many(values)
buffer.seek(0)
out["container"] = list(FileReader(buffer)) == values

from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.serialization import MessageField, SerializationContext
from roastedavro.kafka import AvroDeserializer, AvroSerializer
registry = SchemaRegistryClient.new_client({"url": "mock://no-compiler"})
ctx = SerializationContext("t", MessageField.VALUE)
serializer = AvroSerializer(registry, json.dumps(schema))
deserializer = AvroDeserializer(registry)
resolving = AvroDeserializer(registry, json.dumps(evolved))
messages = [serializer(v, ctx) for v in values]
out["kafka"] = [deserializer(m, ctx) for m in messages] == values
out["kafka_evolved"] = resolving(messages[0], ctx)["extra"]
out["kafka_stats"] = [serializer.stats["fallback"], serializer.stats["compiled"],
                      deserializer.stats["fallback"], deserializer.stats["compiled"]]
out["cache"] = sorted(os.listdir(os.environ["ROASTEDAVRO_CACHE_DIR"]))
print(json.dumps(out))
"""


def test_everything_works_on_a_machine_without_a_c_compiler(tmp_path):
    """PATH without gcc or cc, CC unset: the drop-in, AvroCodec (every policy),
    container files and the Kafka serializers all work, and nothing is built."""
    bare = tmp_path / "bin"
    bare.mkdir()
    cache = tmp_path / "cache"
    env = {key: value for key, value in os.environ.items() if key not in ("CC", "PATH")}
    env.update(PATH=str(bare), ROASTEDAVRO_CACHE_DIR=str(cache))
    env.pop("ROASTEDAVRO_COMPILE", None)
    schema = fresh_schema("NoCc")
    completed = subprocess.run(
        [sys.executable, "-c", NO_COMPILER_SCRIPT, json.dumps(schema), json.dumps(VALUES[:10])],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=300,
    )
    assert completed.returncode == 0, completed.stderr
    out = json.loads(completed.stdout)
    assert out["can_compile"] is False
    assert out["codec"] == ["interpreter", [True] * 10]
    assert out["eager"] == "interpreter"
    assert out["pair"] == ["interpreter", 7]
    assert out["drop_in"] and out["drop_in_file"] and out["container"]
    assert out["drop_in_file_evolved"] == [7, 7]
    assert out["kafka"] is True and out["kafka_evolved"] == 7
    assert out["kafka_stats"] == [10, 0, 10, 0]  # tier 0 (the "fallback" path) for good
    assert [name for name in out["cache"] if name.endswith(compiler.EXT_SUFFIX)] == []
    # said once, with the reason
    assert completed.stderr.count("no C compiler found") == 1, completed.stderr


def test_the_drop_in_serves_a_new_schema_from_tier_0_and_says_so(empty_cache):
    import roastedavro.fastavro as drop_in

    schema = drop_in.parse_schema(fresh_schema("DropIn"))
    out = io.BytesIO()
    drop_in.schemaless_writer(out, schema, VALUES[4])
    assert out.getvalue() == fastavro_bytes(fresh_schema_like(schema), VALUES[4])
    assert drop_in.is_compiled(schema) is False
    drop_in.codec_for(schema).compile()
    assert drop_in.is_compiled(schema) is True
    out.seek(0)
    assert drop_in.schemaless_reader(out, schema) == VALUES[4]


def fresh_schema_like(parsed: dict) -> dict:
    return {key: value for key, value in parsed.items() if not key.startswith("__")}


def test_compile_without_a_c_compiler_is_a_compile_error(empty_cache, monkeypatch, tmp_path):
    from roastedavro.errors import CompileError

    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("CC", raising=False)
    codec = AvroCodec(fresh_schema(), compile="eager")  # tier 0 where nothing compiles
    assert codec.tier == "interpreter"
    with pytest.raises(CompileError, match="no C compiler found"):
        codec.compile()
    assert codec.tier == "interpreter" and codec.load(codec.dump(VALUES[0])) == VALUES[0]


def test_a_hot_schema_without_a_c_compiler_says_so_when_hot_and_serves_on(
    empty_cache, monkeypatch, tmp_path, caplog
):
    """Under "hot", whether this machine compiles is asked when the schema is
    hot, off the caller's path: the first call neither waits for it nor logs."""
    import logging

    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("CC", raising=False)
    monkeypatch.setattr(tiers, "HOT_AFTER", 2000)
    monkeypatch.setattr(tiers, "_told_no_compiler", False)
    with caplog.at_level(logging.WARNING, logger="roastedavro.tiers"):
        codec = AvroCodec(fresh_schema("NoCcHot"))
        assert codec.load(codec.dump(VALUES[0])) == VALUES[0]
        assert codec.wait_compiled(60) and caplog.records == []  # the lookup said nothing
        for value in VALUES * 4:
            assert codec.load(codec.dump(value)) == value
        assert codec.wait_compiled(60)
    assert codec.stats["state"] == "interpreter" and codec.tier == "interpreter"
    told = [r.getMessage() for r in caplog.records if r.name == "roastedavro.tiers"]
    assert len(told) == 1 and "no C compiler found" in told[0], told
    assert modules_in(empty_cache) == []


def test_the_loggers_a_background_job_uses_are_made_on_the_callers_thread(empty_cache, monkeypatch, tmp_path):
    """A logger made on the compile thread at an arbitrary moment changes
    logging's registry under code that walks it without logging's lock
    (pytest's log capture: "dictionary changed size during iteration")."""
    import logging

    from roastedavro.background import BackgroundCompiler

    class Registry(dict):
        threads: set = set()

        def __setitem__(self, key, value):
            self.threads.add(threading.current_thread().name)
            super().__setitem__(key, value)

    registry = Registry(
        (name, logger)
        for name, logger in logging.Logger.manager.loggerDict.items()
        if not name.startswith("roastedavro")
    )
    monkeypatch.setattr(logging.Logger.manager, "loggerDict", registry)
    # the tiers' job says there is no compiler; the background's says a build failed
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("CC", raising=False)
    monkeypatch.setattr(tiers, "HOT_AFTER", 2000)
    monkeypatch.setattr(tiers, "_told_no_compiler", False)
    codec = AvroCodec(fresh_schema("LoggersMadeHere"))
    for value in VALUES * 4:
        assert codec.load(codec.dump(value)) == value
    assert codec.wait_compiled(60) and codec.tier == "interpreter"
    failing = BackgroundCompiler(build="here").submit("fails", lambda build: int("x"))
    assert isinstance(failing.exception(timeout=30), ValueError)
    assert {"roastedavro.tiers", "roastedavro.background"} <= set(registry)
    assert registry.threads == {threading.current_thread().name}


def test_a_background_job_gives_its_result_or_error_and_calls_back_once():
    from roastedavro.background import BackgroundCompiler, Job

    job = Job()
    with pytest.raises(TimeoutError):
        job.result(timeout=0.01)
    seen = []
    job.add_done_callback(lambda done: seen.append(("early", done.result())))
    job.add_done_callback(lambda done: 1 / 0)  # logged; the others still run
    job.add_done_callback(lambda done: seen.append(("late", done.exception())))
    job.set_result(7)
    assert job.done() and job.result() == 7 and job.exception() is None
    job.add_done_callback(lambda done: seen.append(("after", done.result())))
    assert seen == [("early", 7), ("late", None), ("after", 7)]

    failing = BackgroundCompiler(build="here").submit("fails", lambda build: int("x"))
    with pytest.raises(ValueError, match="invalid literal"):
        failing.result(timeout=30)
    assert isinstance(failing.exception(), ValueError)
    assert BackgroundCompiler(build="here").submit("ok", lambda build: build).result(30) == "here"


def test_a_background_job_takes_short_gil_turns_and_restores_the_programs_interval():
    # while a job generates and imports code, a thread serving calls must not
    # wait CPython's default 5 ms for the GIL; afterwards the program's own
    # switch interval is back, and one it set meanwhile is kept
    from roastedavro.background import JOB_SWITCH_INTERVAL, BackgroundCompiler

    before = sys.getswitchinterval()
    try:
        sys.setswitchinterval(0.005)
        seen = (
            BackgroundCompiler(build="here")
            .submit("interval", lambda build: sys.getswitchinterval())
            .result(timeout=30)
        )
        assert seen == pytest.approx(JOB_SWITCH_INTERVAL, abs=1e-6)
        assert sys.getswitchinterval() == 0.005

        def sets_its_own(build):
            sys.setswitchinterval(0.003)
            return None

        BackgroundCompiler(build="here").submit("own", sets_its_own).result(timeout=30)
        assert sys.getswitchinterval() == 0.003
    finally:
        sys.setswitchinterval(before)


def test_engines_of_schemas_no_codec_uses_are_not_kept_for_ever(empty_cache, monkeypatch):
    # a process meeting endless new schemas (a registry's) keeps the engines
    # its codecs use and the last ENGINES_KEPT, not every one it ever made
    import gc

    from roastedavro import codec as codec_module

    monkeypatch.setattr(codec_module, "ENGINES_KEPT", 4)
    kept = AvroCodec(fresh_schema("kept"), compile="never")
    for _ in range(12):
        passing = AvroCodec(fresh_schema("passing"), compile="never")
        passing.dump(VALUES[1])
        passing.wait_compiled(30)
    kept.wait_compiled(30)
    del passing
    gc.collect()
    schemas = [json.loads(key[0]) for key in list(codec_module._engines.keys())]
    names = [schema["name"] for schema in schemas if isinstance(schema, dict) and "name" in schema]
    passing_names = [name for name in names if name.startswith("Tieredpassing")]
    assert len(passing_names) == 4, names
    assert any(name.startswith("Tieredkept") for name in names)
    assert kept.dump(VALUES[2]) == fastavro_bytes(fresh_schema() | {"name": "x"}, VALUES[2])
