"""roastedavro.kafka's AvroSerializer and AvroDeserializer against confluent-kafka's.

    python -m benchmarks.kafka                        # full: 15 repeats, 1,000,000 messages
    python -m benchmarks.kafka --quick                # 3 repeats, 100,000 messages
    python -m benchmarks.kafka --skip-e2e --skip-never-blocked --cases event,trade
    python -m benchmarks.kafka --messages 300000 --e2e-case event

Writes benchmarks/results/kafka.json and kafka.md. Three parts:

1. **Calls** (no network: confluent-kafka's in-memory registry, ``mock://``).
   Per case, ns per call of ``serializer(value, ctx)`` and
   ``deserializer(message, ctx)``, roastedavro.kafka against confluent-kafka's
   ``schema_registry.avro`` serializers (fastavro inside), each given
   ``subject.name.strategy.type=TOPIC`` (confluent-kafka's default, the
   ASSOCIATED strategy, would ask the registry for topic associations). The
   cases are Avro schemas of benchmarks/avro_schemas.py (dict values in
   fastavro's conventions) and two marshmallow ``CompiledSchema`` classes of
   benchmarks/schemas.py, for which confluent-kafka is given the schema's
   ``avro_schema()`` with ``to_dict``/``from_dict`` calling marshmallow's
   ``dump``/``load`` on a separate, never compiled instance (what a marshmallow
   user does today). Before timing, roastedavro's serializer and deserializer
   are called once and their background compiles waited for; every datum must
   serialize to confluent-kafka's bytes and every message deserialize to
   confluent-kafka's value with the same Python types (``strict_difference``),
   else the case is reported and not timed; after timing, no call may have
   taken the uncompiled path. Timing is benchmarks/avro_codecs.py's method (one
   process, a loop of N passes over the batch of datums calibrated to ~30 ms,
   GC off, repeats interleaved round-robin in a rotating order, the median in
   ns per call); ratio = confluent-kafka ns / roastedavro ns; geometric means.

2. **End to end** through a real broker and registry (Kafka 4.3.1 and
   Apicurio Registry 3.0.9, started by scripts/services/services.py on
   127.0.0.1). ``--messages`` values of one case (``--e2e-case``, the batch of
   datums cycled) are produced with ``SerializingProducer`` and consumed with
   ``DeserializingConsumer`` (a fresh group, ``auto.offset.reset=earliest``),
   each contender into a topic of its own: no serializer at all (the
   pre-serialized bytes: what the client library itself costs), roastedavro's
   and confluent-kafka's. Produce time runs from the first ``produce`` to the
   end of ``flush``; consume time from the first message received (after the
   group join) to the last. Every 1,000th consumed value is checked against
   confluent-kafka's reading of the same message.

3. **Never blocked**: with an empty compile cache (a fresh
   ``ROASTEDAVRO_CACHE_DIR``) and a schema of ``--fields`` fields no process
   has compiled, a deserializer reads a loop of messages at once on fastavro
   while the codec compiles in the background, with
   ``BackgroundCompiler(build="child")`` (a child Python process) and
   ``build="here"`` (Cython on the background thread of this process, holding
   the GIL for parts of the build): time of the first message, messages/s
   while the codec compiles (against fastavro's speed with no compile running),
   the longest pause between two batches, time until the compiled codec is
   swapped in and messages/s after.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import gc
import importlib.util
import json
import os
import platform
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from itertools import cycle, islice, repeat
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
SERVICES_SCRIPT = ROOT / "scripts" / "services" / "services.py"
if not __package__:  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(ROOT))

from confluent_kafka.schema_registry import SchemaRegistryClient  # noqa: E402
from confluent_kafka.schema_registry.avro import (  # noqa: E402
    AvroDeserializer as ConfluentDeserializer,
    AvroSerializer as ConfluentSerializer,
)
from confluent_kafka.serialization import MessageField, SerializationContext  # noqa: E402

from benchmarks.avro_schemas import CASES as AVRO_CASES, GROUPS  # noqa: E402
from benchmarks.contenders import _short, strict_difference  # noqa: E402
from benchmarks.run import cpu_and_commit, fmt_ns, fmt_x, geomean  # noqa: E402
from roastedavro.background import BackgroundCompiler  # noqa: E402
from roastedavro.compiler import CACHE_ENV  # noqa: E402
from roastedavro.kafka import COMPILED, FALLBACK, AvroDeserializer, AvroSerializer  # noqa: E402

OURS = "roastedavro.kafka"
THEIRS = "confluent-kafka"
RAW = "no serializer"
NAMES = (OURS, THEIRS)
OPS = ("serialize", "deserialize")
#: the targets of the issue: roastedavro.kafka over confluent-kafka, per call
TARGETS = {"serialize": 5.0, "deserialize": 3.0}
#: confluent-kafka's serializers with the TOPIC strategy: no association lookups
TOPIC = {"subject.name.strategy.type": "TOPIC"}
#: the default cases: those a Kafka topic carries (records), from avro_schemas.py
DEFAULT_CASES = (
    "event",
    "trade",
    "telemetry",
    "order",  # realistic
    "int",
    "str",
    "union",
    "decimal",
    "date_int",
    "map_str",  # classic
    "nested",
    "reference",
    "market_tick",
    "wide_10",
    "wide_50",
    "uuid",
)  # more
#: marshmallow CompiledSchema cases (benchmarks/schemas.py), shown as "<name> (CompiledSchema)"
MARSHMALLOW_CASES = ("market_tick", "nested")
MARSHMALLOW_GROUP = "CompiledSchema"
MARSHMALLOW_BATCH = 100
COMPILE_TIMEOUT = 900.0


# -- timing (benchmarks/avro_codecs.py's, with confluent-kafka's two-argument calls) --


def timed_calls(fn, inputs: list, ctx, n: int) -> int:
    """ns taken by ``n`` passes of ``fn(x, ctx)`` over ``inputs``, with the GC off."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        started = time.perf_counter_ns()
        for _ in repeat(None, n):
            for item in inputs:
                fn(item, ctx)
        return time.perf_counter_ns() - started
    finally:
        if enabled:
            gc.enable()


def calibrate(fn, inputs: list, ctx, target_ns: float) -> int:
    """Passes that make one loop last about ``target_ns`` (also warms up)."""
    n = 1
    while True:
        elapsed = max(timed_calls(fn, inputs, ctx, n), 1)
        if elapsed >= target_ns / 4 or n >= 1 << 24:
            return max(1, round(n * target_ns / elapsed))
        n *= 10 if elapsed < target_ns / 100 else 2


def measure(jobs: list[tuple[str, str, Callable, list]], ctx, repeats: int, target_ns: float) -> dict:
    """Median ns per call of each (contender, op) job, repeats interleaved round-robin."""
    passes = {(name, op): calibrate(fn, inputs, ctx, target_ns) for name, op, fn, inputs in jobs}
    samples: dict[tuple[str, str], list[float]] = {key: [] for key in passes}
    gc.collect()
    for index in range(repeats):
        shift = index % len(jobs) if jobs else 0
        for name, op, fn, inputs in jobs[shift:] + jobs[:shift]:
            n = passes[name, op]
            samples[name, op].append(timed_calls(fn, inputs, ctx, n) / (n * len(inputs)))
    results: dict[str, dict] = {}
    for (name, op), values in samples.items():
        median = statistics.median(values)
        results.setdefault(name, {})[op] = {
            "ns": median,
            "min_ns": min(values),
            "max_ns": max(values),
            "spread": (max(values) - min(values)) / median if median else 0.0,
            "passes_per_loop": passes[name, op],
            "samples_ns": [round(v, 2) for v in values],
        }
    return results


# -- part 1: calls -------------------------------------------------------------------------


@dataclasses.dataclass
class CallCase:
    name: str
    group: str
    description: str
    topic: str
    datums: list
    ours_serializer: Any
    theirs_serializer: Any
    ours_deserializer: Any
    theirs_deserializer: Any


def avro_call_case(name: str, registry) -> CallCase:
    case = AVRO_CASES[name]
    text = json.dumps(case.schema)
    return CallCase(
        name,
        case.group,
        case.description,
        f"bench-{name}",
        case.datums(),
        AvroSerializer(registry, case.schema),
        ConfluentSerializer(registry, text, conf=TOPIC),
        AvroDeserializer(registry),
        ConfluentDeserializer(registry, conf=TOPIC),
    )


def marshmallow_call_case(name: str, registry) -> CallCase:
    from benchmarks.schemas import CASES as SCHEMA_CASES

    case = SCHEMA_CASES[name]
    rng = random.Random(case.seed)
    records = [case.make_record(rng) for _ in range(MARSHMALLOW_BATCH)]
    # what a marshmallow user does today: marshmallow's dump, then fastavro (inside
    # confluent-kafka); fastavro, then marshmallow's load. A separate instance, never compiled.
    plain = case.schema()
    text = json.dumps(plain.avro_schema())
    return CallCase(
        f"{name} ({MARSHMALLOW_GROUP})",
        MARSHMALLOW_GROUP,
        case.description,
        f"bench-marshmallow-{name}",
        records,
        AvroSerializer(registry, case.schema),
        ConfluentSerializer(registry, text, to_dict=lambda obj, ctx: plain.dump(obj), conf=TOPIC),
        AvroDeserializer(registry, case.schema),
        ConfluentDeserializer(registry, text, from_dict=lambda value, ctx: plain.load(value), conf=TOPIC),
    )


def check_call_case(case: CallCase, ctx) -> tuple[dict, list[bytes]]:
    """Compiles roastedavro's codecs (waiting for the background builds) and checks both
    directions against confluent-kafka; the reasons a direction is not timed, and the messages."""
    checks: dict[str, Any] = {"serialize": None, "deserialize": None}
    messages = [case.theirs_serializer(datum, ctx) for datum in case.datums]
    # first calls: registration, then (unless the compile cache has them) background builds
    started = time.perf_counter()
    case.ours_serializer(case.datums[0], ctx)
    case.ours_deserializer(messages[0], ctx)
    built = case.ours_serializer.wait_compiled(COMPILE_TIMEOUT) and case.ours_deserializer.wait_compiled(
        COMPILE_TIMEOUT
    )
    checks["first_calls_s"] = round(time.perf_counter() - started, 3)
    checks["first_paths"] = {
        "serialize": dict(case.ours_serializer.stats),
        "deserialize": dict(case.ours_deserializer.stats),
    }
    if not built:
        checks["serialize"] = checks["deserialize"] = (
            f"the codecs did not compile within {COMPILE_TIMEOUT:.0f} s"
        )
        return checks, messages
    before = (case.ours_serializer.stats[FALLBACK], case.ours_deserializer.stats[FALLBACK])
    for index, (datum, message) in enumerate(zip(case.datums, messages)):
        try:
            written = case.ours_serializer(datum, ctx)
        except Exception as error:  # noqa: BLE001 - report, don't crash
            checks["serialize"] = f"datum {index}: raised {_short(error)}"
            break
        if written != message:
            checks["serialize"] = (
                f"datum {index}: bytes differ from confluent-kafka's ({len(written)} vs {len(message)} bytes)"
            )
            break
    for index, message in enumerate(messages):
        try:
            got = case.ours_deserializer(message, ctx)
            want = case.theirs_deserializer(message, ctx)
        except Exception as error:  # noqa: BLE001
            checks["deserialize"] = f"message {index}: raised {_short(error)}"
            break
        difference = strict_difference(got, want)
        if difference:
            checks["deserialize"] = (
                f"message {index}: value differs from confluent-kafka's "
                f"({'==' if got == want else '!='}): {difference}"
            )
            break
    after = (case.ours_serializer.stats[FALLBACK], case.ours_deserializer.stats[FALLBACK])
    compiled = (case.ours_serializer.stats[COMPILED], case.ours_deserializer.stats[COMPILED])
    for op, was, now, done in zip(OPS, before, after, compiled):
        if now != was and checks[op] is None:
            checks[op] = f"{now - was} calls took the uncompiled path after the compile"
        elif done < len(messages) and checks[op] is None:
            checks[op] = f"only {done} calls on the compiled path"
    return checks, messages


def run_calls(names: list[str], marshmallow: list[str], repeats: int, target_ns: float, log) -> dict:
    registry = SchemaRegistryClient.new_client({"url": "mock://bench"})
    plan = [(n, avro_call_case) for n in names] + [(n, marshmallow_call_case) for n in marshmallow]
    results: dict[str, dict] = {}
    for name, factory in plan:
        started = time.perf_counter()
        try:
            case = factory(name, registry)
        except Exception as error:  # noqa: BLE001 - report the case, go on
            results[name] = {"error": f"setup failed: {_short(error)}"}
            log(f"{name:28s} ERROR {results[name]['error']}")
            continue
        ctx = SerializationContext(case.topic, MessageField.VALUE)
        entry: dict[str, Any] = {"group": case.group, "description": case.description, "topic": case.topic}
        results[case.name] = entry
        try:
            checks, messages = check_call_case(case, ctx)
        except Exception as error:  # noqa: BLE001
            entry["error"] = f"checks failed: {_short(error)}"
            log(f"{case.name:28s} ERROR {entry['error']}")
            continue
        entry["checks"] = checks
        entry["datums"] = len(messages)
        entry["mean_bytes"] = sum(map(len, messages)) / len(messages)
        jobs = []
        if checks["serialize"] is None:
            jobs += [
                (OURS, "serialize", case.ours_serializer, case.datums),
                (THEIRS, "serialize", case.theirs_serializer, case.datums),
            ]
        if checks["deserialize"] is None:
            jobs += [
                (OURS, "deserialize", case.ours_deserializer, messages),
                (THEIRS, "deserialize", case.theirs_deserializer, messages),
            ]
        fallback_before = (case.ours_serializer.stats[FALLBACK], case.ours_deserializer.stats[FALLBACK])
        timings = measure(jobs, ctx, repeats, target_ns)
        fallback_after = (case.ours_serializer.stats[FALLBACK], case.ours_deserializer.stats[FALLBACK])
        entry["fallback_calls_while_timed"] = [b - a for a, b in zip(fallback_before, fallback_after)]
        if fallback_after != fallback_before:
            entry["error"] = "roastedavro took the uncompiled path while timed"
        entry["timings"] = timings
        entry["ratio"] = {
            op: timings[THEIRS][op]["ns"] / timings[OURS][op]["ns"]
            for op in OPS
            if op in timings.get(OURS, {})
        }
        entry["stats"] = {
            "serialize": dict(case.ours_serializer.stats),
            "deserialize": dict(case.ours_deserializer.stats),
        }
        parts = []
        for op in OPS:
            if op in entry["ratio"]:
                parts.append(
                    f"{op} {fmt_ns(timings[OURS][op]['ns'])} vs "
                    f"{fmt_ns(timings[THEIRS][op]['ns'])} ns = "
                    f"{fmt_x(entry['ratio'][op])}"
                )
            else:
                parts.append(f"{op} n/a ({checks[op]})")
        log(f"{case.name:28s} " + " | ".join(parts) + f"  [{time.perf_counter() - started:.0f} s]")
    return results


def summarize_calls(results: dict) -> dict:
    groups: dict[str, list[str]] = {"all": [n for n, r in results.items() if "ratio" in r]}
    avro = [n for n in groups["all"] if results[n]["group"] != MARSHMALLOW_GROUP]
    if len(avro) < len(groups["all"]):
        groups["Avro schemas"] = avro
    for name in groups["all"]:
        groups.setdefault(results[name]["group"], []).append(name)
    summary = {}
    for group, names in groups.items():
        entry: dict[str, Any] = {"cases": names}
        for op in OPS:
            values = [results[n]["ratio"][op] for n in names if op in results[n]["ratio"]]
            entry[op] = {
                "geomean_ratio": geomean(values),
                "cases": len(values),
                "min_ratio": min(values) if values else None,
                "max_ratio": max(values) if values else None,
            }
        summary[group] = entry
    return summary


# -- the servers ---------------------------------------------------------------------------


def load_services():
    # as tests/services.py: a name of its own for the script's module
    spec = importlib.util.spec_from_file_location("roastedavro_services", SERVICES_SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# -- part 2: end to end --------------------------------------------------------------------

PRODUCER_CONF = {
    "linger.ms": 10,
    "batch.size": 1_000_000,
    "batch.num.messages": 10_000,
    "queue.buffering.max.messages": 1_000_000,
    "queue.buffering.max.kbytes": 1_048_576,
    "compression.type": "none",
    "acks": "all",
}
CONSUMER_CONF = {
    "auto.offset.reset": "earliest",
    "enable.auto.commit": False,
}
POLL_EVERY = 1000
SAMPLE_EVERY = 1000


def process_cpu_s(pid: int | None = None) -> float | None:
    """CPU seconds (user + system) used so far by this process (all its threads, librdkafka's
    too) or by process ``pid`` (the broker's JVM), None if unknown."""
    if pid is None:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        return usage.ru_utime + usage.ru_stime
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def _cpu(broker_pid: int | None) -> tuple:
    return time.perf_counter(), process_cpu_s(), process_cpu_s(broker_pid)


def _cpu_since(before: tuple, broker_pid: int | None, count: int) -> dict:
    wall, own, broker = before
    now = _cpu(broker_pid)
    return {
        "client_cpu_us_per_message": (now[1] - own) / count * 1e6,
        "client_cpu_share": (now[1] - own) / (now[0] - wall),
        "broker_cpu_us_per_message": (
            (now[2] - broker) / count * 1e6 if broker is not None and now[2] is not None else None
        ),
    }


def produce_run(
    bootstrap: str, topic: str, values: list, count: int, serializer, broker_pid: int | None = None
) -> dict:
    """``count`` messages (``values`` cycled) through one SerializingProducer."""
    from confluent_kafka import SerializingProducer

    conf = dict(PRODUCER_CONF, **{"bootstrap.servers": bootstrap})
    if serializer is not None:
        conf["value.serializer"] = serializer
    producer = SerializingProducer(conf)
    producer.list_topics(topic, timeout=30)  # connected, with the topic's metadata, before timing
    produce, poll = producer.produce, producer.poll
    full = 0
    gc.collect()
    cpu = _cpu(broker_pid)
    started = time.perf_counter()
    for number, value in enumerate(islice(cycle(values), count)):
        while True:
            try:
                produce(topic, value=value)
                break
            except BufferError:  # the local queue is full: let librdkafka send some
                full += 1
                poll(0.01)
        if number % POLL_EVERY == 0:
            poll(0)
    queued = time.perf_counter()
    left = producer.flush(300)
    done = time.perf_counter()
    return {
        "messages": count,
        "seconds": done - started,
        "produce_loop_s": queued - started,
        "flush_s": done - queued,
        "not_delivered": left,
        "queue_full_waits": full,
        "messages_per_s": count / (done - started),
        **_cpu_since(cpu, broker_pid, count),
    }


def consume_run(
    bootstrap: str,
    topic: str,
    count: int,
    deserializer,
    broker_pid: int | None = None,
    timeout: float = 600.0,
) -> dict:
    """Reads ``count`` messages of ``topic`` with a DeserializingConsumer of a fresh group;
    keeps every SAMPLE_EVERY-th value."""
    from confluent_kafka import DeserializingConsumer

    conf = dict(
        CONSUMER_CONF, **{"bootstrap.servers": bootstrap, "group.id": f"bench-{uuid.uuid4().hex[:12]}"}
    )
    if deserializer is not None:
        conf["value.deserializer"] = deserializer
    consumer = DeserializingConsumer(conf)
    consumer.subscribe([topic])
    poll = consumer.poll
    samples = []
    got = 0
    first = None
    gc.collect()
    subscribed = time.perf_counter()
    deadline = subscribed + timeout
    try:
        while got < count:
            message = poll(1.0)
            if message is None:
                if time.perf_counter() > deadline:
                    break
                continue
            if first is None:
                first = time.perf_counter()
                cpu = _cpu(broker_pid)
            if got % SAMPLE_EVERY == 0:
                samples.append(message.value())
            got += 1
        done = time.perf_counter()
        used = _cpu_since(cpu, broker_pid, max(got - 1, 1)) if first is not None else {}
    finally:
        consumer.close()
    seconds = done - first if first is not None else None
    return {
        "messages": got,
        "seconds": seconds,
        "wait_first_s": (first or done) - subscribed,
        "messages_per_s": (got - 1) / seconds if seconds else None,
        "samples": samples,
        **used,
    }


def run_e2e(
    kafka, registry_url: str, case_name: str, count: int, rounds: int, call_repeats: int, log
) -> dict:
    from confluent_kafka.admin import AdminClient, NewTopic

    case = AVRO_CASES[case_name]
    client = SchemaRegistryClient({"url": registry_url})
    datums = case.datums()
    run = uuid.uuid4().hex[:8]
    text = json.dumps(case.schema)
    ours = AvroSerializer(client, case.schema)
    theirs = ConfluentSerializer(client, text, conf=TOPIC)
    ours_reader = AvroDeserializer(client)
    theirs_reader = ConfluentDeserializer(client, conf=TOPIC)
    result: dict[str, Any] = {
        "case": case_name,
        "description": case.description,
        "messages": count,
        "rounds": rounds,
        "datums": len(datums),
        "producer_conf": PRODUCER_CONF,
        "consumer_conf": CONSUMER_CONF,
        "checks": {},
    }

    # both sides on one subject: the same bytes, read to the same values
    check_ctx = SerializationContext(f"bench-e2e-check-{run}", MessageField.VALUE)
    messages = [theirs(datum, check_ctx) for datum in datums]
    ours(datums[0], check_ctx)
    ours_reader(messages[0], check_ctx)
    assert ours.wait_compiled(COMPILE_TIMEOUT) and ours_reader.wait_compiled(COMPILE_TIMEOUT)
    same_bytes = [ours(datum, check_ctx) for datum in datums] == messages
    expected = [theirs_reader(message, check_ctx) for message in messages]
    same_values = all(
        strict_difference(ours_reader(m, check_ctx), want) is None for m, want in zip(messages, expected)
    )
    result["checks"]["same_bytes"] = same_bytes
    result["checks"]["same_values"] = same_values
    result["mean_bytes"] = sum(map(len, messages)) / len(messages)
    if not (same_bytes and same_values):
        result["error"] = "roastedavro's bytes or values differ from confluent-kafka's: not timed"
        return result

    # the calls of part 1 again, with this registry's HTTP client (its caches warm)
    calls = measure(
        [
            (OURS, "serialize", ours, datums),
            (THEIRS, "serialize", theirs, datums),
            (OURS, "deserialize", ours_reader, messages),
            (THEIRS, "deserialize", theirs_reader, messages),
        ],
        check_ctx,
        call_repeats,
        30e6,
    )
    result["calls"] = calls
    result["calls_ratio"] = {op: calls[THEIRS][op]["ns"] / calls[OURS][op]["ns"] for op in OPS}
    log(
        "  calls with the registry's HTTP client: "
        + ", ".join(
            f"{op} {fmt_ns(calls[OURS][op]['ns'])} vs {fmt_ns(calls[THEIRS][op]['ns'])} ns = "
            f"{fmt_x(result['calls_ratio'][op])}"
            for op in OPS
        )
    )

    contenders = {RAW: (None, None), OURS: (ours, ours_reader), THEIRS: (theirs, theirs_reader)}
    short = {RAW: "raw", OURS: "roastedavro", THEIRS: "confluent"}
    topics = {
        (r, name): f"bench-e2e-{case_name}-{short[name]}-{run}-{r}"
        for r in range(rounds)
        for name in contenders
    }
    admin = AdminClient({"bootstrap.servers": kafka.bootstrap})
    for future in admin.create_topics(
        [NewTopic(t, num_partitions=1, replication_factor=1) for t in topics.values()]
    ).values():
        future.result(60)
    # register each topic's subject and fetch its schema before the timed runs
    for (r, name), topic in topics.items():
        serializer, deserializer = contenders[name]
        if serializer is not None:
            ctx = SerializationContext(topic, MessageField.VALUE)
            message = serializer(datums[0], ctx)
            deserializer(message, ctx)
    assert ours.stats[FALLBACK] == 0 or ours.wait_compiled(COMPILE_TIMEOUT)
    runs: dict[str, list] = {name: [] for name in contenders}
    order = list(contenders)
    for r in range(rounds):
        rotated = order[r % len(order) :] + order[: r % len(order)]
        for name in rotated:
            serializer, _ = contenders[name]
            values = messages if serializer is None else datums
            fallback = ours.stats[FALLBACK]
            produced = produce_run(kafka.bootstrap, topics[r, name], values, count, serializer, kafka.pid)
            if name == OURS and ours.stats[FALLBACK] != fallback:
                produced["error"] = "roastedavro took the uncompiled path"
            runs[name].append({"round": r, "topic": topics[r, name], "produce": produced})
            log(
                f"  produce {name:18s} round {r}: {produced['messages_per_s']:10,.0f} msg/s "
                f"({produced['seconds']:.1f} s; loop {produced['produce_loop_s']:.1f} s, flush "
                f"{produced['flush_s']:.2f} s, queue full {produced['queue_full_waits']}x)"
            )
        for name in rotated:
            _, deserializer = contenders[name]
            fallback = ours_reader.stats[FALLBACK]
            consumed = consume_run(kafka.bootstrap, topics[r, name], count, deserializer, kafka.pid)
            samples = consumed.pop("samples")
            want = messages if deserializer is None else expected
            wrong = [
                index
                for index, value in enumerate(samples)
                if value != want[(index * SAMPLE_EVERY) % len(want)]
            ]
            consumed["samples_checked"] = len(samples)
            consumed["samples_wrong"] = len(wrong)
            if name == OURS and ours_reader.stats[FALLBACK] != fallback:
                consumed["error"] = "roastedavro took the uncompiled path"
            if consumed["messages"] != count:
                consumed["error"] = f"consumed {consumed['messages']} of {count} messages"
            runs[name][r]["consume"] = consumed
            rate = consumed["messages_per_s"]
            log(
                f"  consume {name:18s} round {r}: "
                + (
                    f"{rate:10,.0f} msg/s ({consumed['seconds']:.1f} s after "
                    f"{consumed['wait_first_s']:.1f} s to the first message)"
                    if rate
                    else "n/a"
                )
                + (f", {len(wrong)} of {len(samples)} sampled values WRONG" if wrong else "")
                + (f"  ERROR {consumed['error']}" if consumed.get("error") else "")
            )
    result["runs"] = runs
    best: dict[str, dict] = {}
    for name, entries in runs.items():
        best[name] = {}
        for direction in ("produce", "consume"):
            rates = [
                e[direction]["messages_per_s"]
                for e in entries
                if e.get(direction, {}).get("messages_per_s") and not e[direction].get("error")
            ]
            best[name][direction] = max(rates) if rates else None
    result["best_messages_per_s"] = best
    result["us_per_message"] = {
        name: {d: (1e6 / rate if rate else None) for d, rate in rates.items()} for name, rates in best.items()
    }
    result["ratio"] = {
        d: (best[OURS][d] / best[THEIRS][d] if best[OURS][d] and best[THEIRS][d] else None)
        for d in ("produce", "consume")
    }
    # the most any serializer could gain here: confluent-kafka's time per message against
    # the client library's own (no serializer)
    result["ceiling_ratio"] = {
        d: (best[RAW][d] / best[THEIRS][d] if best[RAW][d] and best[THEIRS][d] else None)
        for d in ("produce", "consume")
    }
    us = result["us_per_message"]
    result["serde_us_per_message"] = {
        name: {
            d: (us[name][d] - us[RAW][d] if us[name][d] and us[RAW][d] else None)
            for d in ("produce", "consume")
        }
        for name in NAMES
    }
    result["stats"] = {"serialize": dict(ours.stats), "deserialize": dict(ours_reader.stats)}
    result["client_cpu"] = client_cpu_summary(runs)
    return result


def client_cpu_summary(runs: dict) -> dict:
    """Per contender and direction, the least client CPU µs per message over the rounds; the
    ratios (confluent-kafka's over roastedavro's, and over no serializer's: the ceiling) by
    CPU time, which other processes on the machine disturb less than the wall time."""
    least: dict[str, dict] = {}
    for name, entries in runs.items():
        least[name] = {}
        for direction in ("produce", "consume"):
            values = [
                e[direction]["client_cpu_us_per_message"]
                for e in entries
                if e.get(direction, {}).get("client_cpu_us_per_message") and not e[direction].get("error")
            ]
            least[name][direction] = min(values) if values else None

    def over(a: str, b: str, direction: str) -> float | None:
        x, y = least.get(a, {}).get(direction), least.get(b, {}).get(direction)
        return x / y if x and y else None

    return {
        "us_per_message": least,
        "ratio": {d: over(THEIRS, OURS, d) for d in ("produce", "consume")},
        "ceiling_ratio": {d: over(THEIRS, RAW, d) for d in ("produce", "consume")},
        "serde_us_per_message": {
            name: {
                d: (
                    least[name][d] - least[RAW][d]
                    if least.get(name, {}).get(d) and least.get(RAW, {}).get(d)
                    else None
                )
                for d in ("produce", "consume")
            }
            for name in NAMES
        },
    }


# -- part 3: never blocked -----------------------------------------------------------------


def wide_schema(fields: int, name: str) -> dict:
    kinds = [
        "long",
        "string",
        "double",
        ["null", "string"],
        {"type": "long", "logicalType": "timestamp-micros"},
        "boolean",
    ]
    return {
        "type": "record",
        "name": name,
        "namespace": "bench.kafka",
        "fields": [{"name": f"f{n}", "type": kinds[n % len(kinds)]} for n in range(fields)],
    }


def wide_value(schema: dict, seed: int) -> dict:
    at = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
    rng = random.Random(seed)
    value = {}
    for field in schema["fields"]:
        kind = field["type"]
        if kind == "long":
            value[field["name"]] = rng.randrange(-(10**12), 10**12)
        elif kind == "string":
            value[field["name"]] = f"s{rng.randrange(10**6)}"
        elif kind == "double":
            value[field["name"]] = rng.random() * 1000
        elif kind == "boolean":
            value[field["name"]] = rng.random() < 0.5
        elif isinstance(kind, list):
            value[field["name"]] = None if rng.random() < 0.5 else f"n{rng.randrange(1000)}"
        else:
            value[field["name"]] = at + datetime.timedelta(microseconds=rng.randrange(10**12))
    return value


def _usage() -> tuple[float, float, float, float | None]:
    """Now: wall time, CPU seconds of this process and of its finished child processes, and
    the busy CPU seconds of the whole machine so far (/proc/stat; None if unknown)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        jiffies = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
        busy = (sum(jiffies) - jiffies[3] - jiffies[4]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        busy = None
    return (time.perf_counter(), own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime, busy)


def _others_cpus(before: tuple, after: tuple) -> float | None:
    """CPUs (on average over the interval) used by processes other than this one and its
    children: the machine's busy time minus ours."""
    if before[3] is None or after[3] is None:
        return None
    wall = after[0] - before[0]
    ours = (after[1] - before[1]) + (after[2] - before[2])
    return max(0.0, (after[3] - before[3]) - ours) / wall


def _rate_loop(read, messages: list, ctx, seconds: float) -> tuple[float, float]:
    """Messages/s of ``read`` over ``messages`` (cycled) for about ``seconds``, and the
    share of that time the thread was on a CPU."""
    count = 0
    cpu = time.thread_time()
    started = time.perf_counter()
    while time.perf_counter() - started < seconds:
        for message in messages:
            read(message, ctx)
        count += len(messages)
    wall = time.perf_counter() - started
    return count / wall, (time.thread_time() - cpu) / wall


def never_blocked_mode(client, fields: int, build: str, settle_s: float, timeout: float, log) -> dict:
    """One fresh schema, one fresh compile cache: a deserializer's first message, its speed
    while the codec builds (``build``), the swap, and its speed after."""
    cache = tempfile.mkdtemp(prefix="roastedavro-bench-kafka-cache-")
    saved = os.environ.get(CACHE_ENV)
    os.environ[CACHE_ENV] = cache  # a child build process inherits it
    try:
        schema = wide_schema(fields, f"Wide{build.title()}{uuid.uuid4().hex[:10]}")
        topic = f"bench-never-blocked-{build}-{uuid.uuid4().hex[:8]}"
        ctx = SerializationContext(topic, MessageField.VALUE)
        values = [wide_value(schema, n) for n in range(100)]
        writer = ConfluentSerializer(client, json.dumps(schema), conf=TOPIC)
        messages = [writer(value, ctx) for value in values]
        expected = ConfluentDeserializer(client, conf=TOPIC)
        want = [expected(message, ctx) for message in messages]
        # control: fastavro with nothing compiling (the uncompiled path, no compiler)
        idle = AvroDeserializer(client, compiler=None)
        idle(messages[0], ctx)
        idle_usage = _usage()
        idle_rate, idle_cpu_share = _rate_loop(idle, messages, ctx, 3.0)
        idle_others = _others_cpus(idle_usage, _usage())
        assert set(idle.stats) == {FALLBACK}, idle.stats

        compiler = BackgroundCompiler(build=build)
        swapped: list[tuple[float, BaseException | None]] = []
        usage_at_swap: list[tuple] = []

        def on_compiled(what, error):
            swapped.append((time.perf_counter(), error))
            usage_at_swap.append(_usage())

        reader = AvroDeserializer(client, compiler=compiler, on_compiled=on_compiled)
        load_before = os.getloadavg()[0]
        children_before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        first = reader(messages[0], ctx)
        first_done = time.perf_counter()
        first_cpu = time.thread_time()
        first_usage = _usage()
        correct_first = strict_difference(first, want[0]) is None
        batches = []  # (end of the batch, messages so far, the reading thread's CPU time)
        count = 0
        stop_at = started + timeout
        gc.disable()  # as in the timed loops; the batches allocate little that lives
        try:
            while True:
                for message in messages:
                    reader(message, ctx)
                count += len(messages)
                now = time.perf_counter()
                batches.append((now, count, time.thread_time()))
                if swapped and now - swapped[0][0] >= settle_s:
                    break
                if now > stop_at:
                    break
        finally:
            gc.enable()
        wrong = sum(strict_difference(reader(m, ctx), w) is not None for m, w in zip(messages, want))
        entry: dict[str, Any] = {
            "build": build,
            "fields": fields,
            "cache_dir": "fresh (empty)",
            "mean_bytes": sum(map(len, messages)) / len(messages),
            "first_message_ms": (first_done - started) * 1e3,
            "first_message_correct": correct_first,
            "wrong_after": wrong,
            "idle_fallback_per_s": idle_rate,
            "reader_cpu_share_idle": idle_cpu_share,
            "stats": dict(reader.stats),
            "build_s": next(iter(compiler.timings.values()), None),
            "loadavg_1min_at_start": round(load_before, 2),
            "other_processes_cpus_idle": idle_others,
            "other_processes_cpus_during_compile": (
                _others_cpus(first_usage, usage_at_swap[0]) if usage_at_swap else None
            ),
        }
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        entry["child_processes_cpu_s"] = round(
            children.ru_utime + children.ru_stime - children_before.ru_utime - children_before.ru_stime, 2
        )
        if not swapped:
            entry["error"] = f"no swap within {timeout:.0f} s"
            return entry
        swap_at, error = swapped[0]
        if error is not None:
            entry["error"] = f"the build failed: {_short(error)}"
            return entry
        entry["swap_after_s"] = swap_at - started
        during = [(t, c) for t, c, cpu in batches if t <= swap_at]
        after = [(t, c) for t, c, cpu in batches if t >= swap_at + 0.5]
        if during:
            entry["during_compile_per_s"] = during[-1][1] / (during[-1][0] - first_done)
            # the CPU time the reading thread got over the window: below 1, it waited (for
            # the GIL, or for a CPU the other processes had)
            last = [b for b in batches if b[0] <= swap_at][-1]
            entry["reader_cpu_share_during_compile"] = (last[2] - first_cpu) / (last[0] - first_done)
            ends = [first_done] + [t for t, _ in during]
            gaps = [b - a for a, b in zip(ends, ends[1:])]
            entry["batch_ms_median"] = statistics.median(gaps) * 1e3
            entry["longest_pause_ms"] = max(gaps) * 1e3
            entry["batches_during_compile"] = len(gaps)
            # seconds of the compile window, each with its messages/s
            timeline, second, last_count, last_t = [], first_done + 1.0, 0, first_done
            for t, c in during:
                if t >= second:
                    timeline.append(round((c - last_count) / (t - last_t)))
                    last_count, last_t, second = c, t, t + 1.0
            entry["per_second_during_compile"] = timeline
            entry["slowest_second_per_s"] = min(timeline) if timeline else None
        if len(after) >= 2:
            entry["compiled_per_s"] = (after[-1][1] - after[0][1]) / (after[-1][0] - after[0][0])
            tail = [b for b in batches if b[0] >= swap_at + 0.5]
            entry["reader_cpu_share_after"] = (tail[-1][2] - tail[0][2]) / (tail[-1][0] - tail[0][0])
        log(
            f"  build={build}: first message {entry['first_message_ms']:.0f} ms; fastavro "
            f"{entry.get('during_compile_per_s', 0):,.0f} msg/s while compiling (idle "
            f"{idle_rate:,.0f}), longest pause {entry.get('longest_pause_ms', 0):.0f} ms; "
            f"swap after {entry['swap_after_s']:.1f} s; compiled "
            f"{entry.get('compiled_per_s', 0):,.0f} msg/s; reader's CPU share "
            f"{entry.get('reader_cpu_share_during_compile', 0):.0%} while compiling, "
            f"{idle_cpu_share:.0%} idle; build {entry['build_s'] or 0:.1f} s, child processes' "
            f"CPU {entry['child_processes_cpu_s']:.1f} s; other processes' CPUs "
            f"{fmt_cpus(entry['other_processes_cpus_during_compile'])} while compiling, "
            f"{fmt_cpus(idle_others)} idle"
        )
        return entry
    finally:
        if saved is None:
            os.environ.pop(CACHE_ENV, None)
        else:
            os.environ[CACHE_ENV] = saved
        shutil.rmtree(cache, ignore_errors=True)


def run_never_blocked(client, fields: int, settle_s: float, timeout: float, log) -> dict:
    return {
        build: never_blocked_mode(client, fields, build, settle_s, timeout, log)
        for build in ("child", "here")
    }


# -- environment -------------------------------------------------------------------------


def environment(args, services) -> dict:
    from importlib.metadata import PackageNotFoundError, version

    import confluent_kafka

    def installed(package: str) -> str | None:
        try:
            return version(package)
        except PackageNotFoundError:
            return None

    cpu, commit = cpu_and_commit()
    try:
        java = subprocess.run(
            ["java", "-version"], capture_output=True, text=True, timeout=30
        ).stderr.splitlines()[0]
    except (OSError, IndexError, subprocess.SubprocessError):
        java = None
    versions = {
        package: installed(package)
        for package in ("roastedavro", "confluent-kafka", "fastavro", "Cython", "marshmallow")
    }
    versions["librdkafka"] = confluent_kafka.libversion()[0]
    return {
        "date": time.strftime("%Y-%m-%d %H:%M:%S %z"),
        "mode": "quick" if args.quick else "full",
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpu": cpu,
        "cpus": os.cpu_count(),
        "git_commit": commit,
        "versions": versions,
        "servers": {
            "kafka": services.KAFKA_VERSION,
            "apicurio_registry": services.APICURIO_VERSION,
            "java": java,
            "jvm_flags": list(services.JVM_FLAGS),
        },
        "repeats": args.repeats,
        "target_loop_ms": args.target_ms,
        "messages": args.messages,
        "compile_cache": os.environ.get(CACHE_ENV) or "(default)",
        "loadavg_at_start": [round(x, 2) for x in os.getloadavg()],
    }


# -- output --------------------------------------------------------------------------------


def fmt_rate(value: float | None) -> str:
    return "n/a" if value is None else f"{value:,.0f}"


def fmt_cpus(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def fmt_us(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def markdown(report: dict) -> str:
    env = report["environment"]
    servers = env["servers"]
    versions = ", ".join(f"{k} {v}" for k, v in env["versions"].items())
    lines = [
        "# roastedavro.kafka against confluent-kafka's Avro serializers",
        "",
        "Regenerate (from the repository root; the servers need Java 17+, their jars are "
        "fetched into build/services/ on first use):",
        "",
        "```bash",
        "python -m benchmarks.kafka                # full: 15 repeats, 1,000,000 messages",
        "python -m benchmarks.kafka --quick        # 3 repeats, 100,000 messages",
        "python -m benchmarks.kafka --skip-e2e --skip-never-blocked   # the calls only, no servers",
        "```",
        "",
        f"This run: `{report['command']}`.",
        "",
        f"{env['date']}, {env['mode']} mode. Python {env['python']}, {env['cpu']} "
        f"({env['cpus']} CPUs, shared), {env['platform']}. roastedavro {env['git_commit']}. "
        f"Versions: {versions}. Servers: Kafka {servers['kafka']} (KRaft, one node) and "
        f"Apicurio Registry {servers['apicurio_registry']} (Confluent API), on 127.0.0.1 of "
        f"the same machine, {servers['java']}, JVM flags `{' '.join(servers['jvm_flags'])}` "
        "(scripts/services/services.py's). Load average (1, 5, 15 min) at start "
        f"{env['loadavg_at_start']}, at end {env.get('loadavg_at_end')}. Total "
        f"{report['elapsed_s']:.0f} s.",
        "",
    ]
    calls = report.get("calls")
    if calls:
        summary = report["calls_summary"]
        lines += [
            "## 1. Calls: ns per call, no network",
            "",
            f"{env['repeats']} interleaved repeats of ~{env['target_loop_ms']:.0f} ms loops, "
            "median; confluent-kafka's in-memory registry (`mock://`). `serializer(value, "
            "ctx)` and `deserializer(message, ctx)` as SerializingProducer and "
            "DeserializingConsumer call them; a timed call goes over the case's batch of "
            "different datums (benchmarks/avro_schemas.py), the figure is ns per message. "
            "confluent-kafka: `schema_registry.avro.AvroSerializer(client, schema_str, "
            "conf={'subject.name.strategy.type': 'TOPIC'})` and `AvroDeserializer(client, "
            "conf=...)` (the same strategy; its default, ASSOCIATED, asks the registry for "
            "the topic's associations). roastedavro.kafka: `AvroSerializer(client, schema)` "
            "and `AvroDeserializer(client)`, on their compiled codecs (the background "
            "compiles waited for before timing; no timed call took the uncompiled path). "
            "Ratio = confluent-kafka ns / roastedavro.kafka ns. "
            f"Targets: {TARGETS['serialize']:g}× serializing, {TARGETS['deserialize']:g}× "
            "deserializing.",
            "",
            "| cases | serialize (geomean) | min - max | deserialize (geomean) | min - max |",
            "| --- | ---: | ---: | ---: | ---: |",
        ]
        for group, entry in summary.items():
            cells = []
            for op in OPS:
                per = entry[op]
                cells += [
                    fmt_x(per["geomean_ratio"]),
                    f"{fmt_x(per['min_ratio'])} - {fmt_x(per['max_ratio'])}",
                ]
            lines.append(f"| {group} ({len(entry['cases'])}) | " + " | ".join(cells) + " |")
        lines += [
            "",
            "| case | group | datums | bytes | serialize: ours | confluent-kafka | ratio | "
            "deserialize: ours | confluent-kafka | ratio |",
            "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        ]
        for name, entry in calls.items():
            if "timings" not in entry:
                lines.append(f"| {name} | {entry.get('group', '')} | | | error | | | error | | |")
                continue
            cells = []
            for op in OPS:
                if op in entry["ratio"]:
                    cells += [
                        fmt_ns(entry["timings"][OURS][op]["ns"]),
                        fmt_ns(entry["timings"][THEIRS][op]["ns"]),
                        f"**{fmt_x(entry['ratio'][op])}**",
                    ]
                else:
                    cells += ["n/a", "n/a", "n/a"]
            lines.append(
                f"| {name} | {entry['group']} | {entry['datums']} | "
                f"{entry['mean_bytes']:,.0f} | " + " | ".join(cells) + " |"
            )
        lines += [
            "",
            f"The {MARSHMALLOW_GROUP} rows: roastedavro.kafka given the marshmallow "
            "`CompiledSchema` class (values are the records a marshmallow user dumps: "
            "`Enum` members, `Decimal`, `datetime`...; it writes `dump_compiled`'s bytes and "
            "reads to `load_compiled`'s values) against confluent-kafka given the class's "
            "`avro_schema()` with `to_dict=lambda obj, ctx: schema.dump(obj)` and "
            "`from_dict=lambda value, ctx: schema.load(value)` on a separate, never compiled "
            "instance: the same input objects, the same bytes, the same loaded values "
            "(checked), marshmallow's validation on both sides.",
            "",
        ]
        notes = []
        for name, entry in calls.items():
            if entry.get("error"):
                notes.append(f"- **{name}**: {entry['error']}")
            for op in OPS:
                reason = entry.get("checks", {}).get(op)
                if reason:
                    notes.append(f"- {name} / {op}: not timed, {reason}")
        lines += [
            "Checks: every datum serialized by roastedavro.kafka to confluent-kafka's "
            "bytes, every message deserialized to confluent-kafka's value with the same "
            "Python types. " + ("Exceptions:" if notes else "All cases passed."),
            "",
        ] + notes
        if notes:
            lines.append("")

    e2e = report.get("e2e")
    if e2e:
        lines += ["## 2. End to end through the broker", ""]
        if e2e.get("error") or "best_messages_per_s" not in e2e:
            lines += [f"Not run: {e2e.get('error')}", ""]
        else:
            best, us, serde = (e2e["best_messages_per_s"], e2e["us_per_message"], e2e["serde_us_per_message"])
            lines += [
                f"{e2e['messages']:,} `{e2e['case']}` messages ({e2e['mean_bytes']:.0f} bytes "
                f"each, {e2e['datums']} different datums cycled), one partition, produced with "
                "`SerializingProducer` and consumed with `DeserializingConsumer` (a fresh group, "
                "`auto.offset.reset=earliest`), each contender into its own topic"
                + (f", best of {e2e['rounds']} rounds" if e2e["rounds"] > 1 else ", one round")
                + ". Producer: `"
                + ", ".join(f"{k}={v}" for k, v in e2e["producer_conf"].items())
                + f"`, `poll(0)` every {POLL_EVERY:,} messages and on `BufferError`; its time runs "
                "from the first `produce` to the end of `flush()`. Consumer: `poll(1.0)` per "
                "message; its time runs from the first message received (after the group join) "
                f"to the last. Every {SAMPLE_EVERY:,}th consumed value is compared with "
                "confluent-kafka's reading of the same message. *no serializer*: the same loops "
                "with the pre-serialized bytes and no value serializer or deserializer: what "
                "the client library (confluent-kafka's Python layer and librdkafka) and the "
                "broker cost per message, the ceiling for any serializer.",
                "",
                "| contender | produce msg/s | µs/msg | serializer µs/msg | consume msg/s | "
                "µs/msg | deserializer µs/msg |",
                "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
            ]
            for name in (RAW, OURS, THEIRS):
                extra = serde.get(name, {})
                lines.append(
                    f"| {name} | {fmt_rate(best[name]['produce'])} | "
                    f"{fmt_us(us[name]['produce'])} | "
                    + (fmt_us(extra.get("produce")) if name != RAW else "")
                    + " | "
                    f"{fmt_rate(best[name]['consume'])} | {fmt_us(us[name]['consume'])} | "
                    + (fmt_us(extra.get("consume")) if name != RAW else "")
                    + " |"
                )
            ratio, ceiling = e2e["ratio"], e2e["ceiling_ratio"]
            lines += [
                "",
                f"roastedavro.kafka over confluent-kafka end to end: **{fmt_x(ratio['produce'])}** "
                f"producing, **{fmt_x(ratio['consume'])}** consuming. The serializer's share is "
                "the µs/msg above the no-serializer row. The end-to-end ratio is bounded by what "
                "the client library costs per message: a serializer costing nothing would be "
                f"{fmt_x(ceiling['produce'])} confluent-kafka's rate producing and "
                f"{fmt_x(ceiling['consume'])} consuming here (no-serializer msg/s / "
                "confluent-kafka msg/s).",
                "",
            ]
            cpu = e2e.get("client_cpu") or client_cpu_summary(e2e["runs"])
            least, cpu_serde = cpu["us_per_message"], cpu["serde_us_per_message"]
            lines += [
                "The same runs by the CPU time of the client process (its Python thread and "
                "librdkafka's threads), which the other processes of a shared machine disturb "
                "less than the wall time:",
                "",
                "| contender | produce: client CPU µs/msg | serializer µs/msg | consume: client "
                "CPU µs/msg | deserializer µs/msg |",
                "| --- | ---: | ---: | ---: | ---: |",
            ]
            for name in (RAW, OURS, THEIRS):
                extra = cpu_serde.get(name, {})
                lines.append(
                    f"| {name} | {fmt_us(least[name]['produce'])} | "
                    + (fmt_us(extra.get("produce")) if name != RAW else "")
                    + " | "
                    f"{fmt_us(least[name]['consume'])} | "
                    + (fmt_us(extra.get("consume")) if name != RAW else "")
                    + " |"
                )
            lines += [
                "",
                "By client CPU, confluent-kafka over roastedavro.kafka: "
                f"**{fmt_x(cpu['ratio']['produce'])}** producing, "
                f"**{fmt_x(cpu['ratio']['consume'])}** consuming; the ceiling (confluent-kafka "
                f"over no serializer) {fmt_x(cpu['ceiling_ratio']['produce'])} and "
                f"{fmt_x(cpu['ceiling_ratio']['consume'])}.",
                "",
            ]
            raw = [run for run in e2e["runs"].get(RAW, []) if run.get("consume")]
            shares = {
                d: [
                    run[d].get("client_cpu_share")
                    for run in raw
                    if run[d].get("client_cpu_share") is not None
                ]
                for d in ("produce", "consume")
            }
            if shares["produce"] and shares["consume"]:
                lines += [
                    "With no serializer the client process was on a CPU "
                    f"{max(shares['produce']):.0%} of the produce run's wall time and "
                    f"{max(shares['consume']):.0%} of the consume run's (its threads together, "
                    "so up to 200% on 2 CPUs): below 100%, the Python thread waited, in "
                    "`poll()` for the next fetched batch or for a CPU; a deserializer's work "
                    "partly fills those waits, so the wall-time ratios understate what the "
                    "serializers cost apart.",
                    "",
                ]
            calls = e2e.get("calls")
            if calls:
                lines += [
                    f"Per call with the registry's HTTP client (part 1's method, "
                    f"{len(calls[OURS]['serialize']['samples_ns'])} repeats, the `{e2e['case']}` "
                    "batch; the client's caches warm): serialize "
                    f"{fmt_ns(calls[OURS]['serialize']['ns'])} ns against "
                    f"{fmt_ns(calls[THEIRS]['serialize']['ns'])} "
                    f"({fmt_x(e2e['calls_ratio']['serialize'])}), deserialize "
                    f"{fmt_ns(calls[OURS]['deserialize']['ns'])} ns against "
                    f"{fmt_ns(calls[THEIRS]['deserialize']['ns'])} "
                    f"({fmt_x(e2e['calls_ratio']['deserialize'])}).",
                    "",
                ]
            runs = e2e["runs"]
            lines += [
                "Per run: seconds, and the CPU time per message of this process (the Python "
                "thread and librdkafka's threads) and of the broker's JVM over the run (the "
                "registry is idle then). On this 2-CPU machine the client and the broker "
                "compete for the CPUs, with whatever else runs on it.",
                "",
                "| contender | round | produce s (loop + flush) | client CPU µs/msg | broker CPU "
                "µs/msg | consume s (wait for the first message) | client CPU µs/msg | broker "
                "CPU µs/msg | sampled values wrong |",
                "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
            ]
            for name, entries in runs.items():
                for run in entries:
                    p, c = run["produce"], run.get("consume", {})
                    lines.append(
                        f"| {name} | {run['round']} | {p['seconds']:.1f} "
                        f"({p['produce_loop_s']:.1f} + {p['flush_s']:.2f}) | "
                        f"{fmt_us(p.get('client_cpu_us_per_message'))} | "
                        f"{fmt_us(p.get('broker_cpu_us_per_message'))} | "
                        f"{c.get('seconds') or 0:.1f} ({c.get('wait_first_s', 0):.1f}) | "
                        f"{fmt_us(c.get('client_cpu_us_per_message'))} | "
                        f"{fmt_us(c.get('broker_cpu_us_per_message'))} | "
                        f"{c.get('samples_wrong', 'n/a')} of {c.get('samples_checked', 'n/a')} |"
                    )
            errors = [
                f"- {name} round {run['round']} {d}: {run[d]['error']}"
                for name, entries in runs.items()
                for run in entries
                for d in ("produce", "consume")
                if run.get(d, {}).get("error")
            ]
            lines += [""] + (errors + [""] if errors else [])

    never = report.get("never_blocked")
    if never:
        lines += [
            "## 3. Never blocked: a schema met for the first time",
            "",
            "An empty compile cache (a fresh `ROASTEDAVRO_CACHE_DIR`, inherited by the build's "
            "child process) and a record schema of "
            f"{next(iter(never.values())).get('fields')} fields (long, string, double, "
            "[null, string], timestamp-micros, boolean) that no process has compiled, "
            "registered in the registry"
            + (
                " (Apicurio, over HTTP)"
                if report.get("never_blocked_registry") == "apicurio"
                else " (in memory)"
            )
            + ". A `AvroDeserializer(client, compiler=BackgroundCompiler(build=...))` reads "
            "100 different messages in a loop from the first message on: fastavro reads while "
            "the codec builds in the background, then the compiled codec is swapped in. "
            "*idle fastavro*: the same messages read by a deserializer with no compiler "
            "(fastavro, nothing building). *longest pause*: the longest time between the "
            "ends of two consecutive 100-message batches while the codec built (the median "
            "batch is shown for scale). `child`: Cython and the C compiler run in a child "
            "Python process; `here`: in this process, on the background thread (Cython "
            "holds the GIL for parts of the build). *reader's CPU share*: the CPU time the "
            "reading thread got over the wall time (`time.thread_time()`): below 100% it "
            "waited, for the GIL (`here`) or for a CPU (the build needs one: with `child` "
            "the reader slows only when no CPU is free for the build process, as on a "
            "2-CPU machine another process keeps busy). *other processes' CPUs*: the "
            "machine's busy CPU time (/proc/stat) minus this process's and its child "
            "processes', over the wall time: what the rest of the machine took (of "
            f"{report['environment']['cpus']} CPUs).",
            "",
            "| build | first message ms | msg/s while compiling | idle fastavro msg/s | slowest "
            "second msg/s | longest pause ms (median batch) | reader's CPU share: compiling / "
            "idle | other processes' CPUs: compiling / idle | swap after s | build s (CPU of "
            "child processes) | msg/s compiled |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        ]
        for build, entry in never.items():
            if entry.get("error"):
                lines.append(
                    f"| {build} | {entry.get('first_message_ms', 0):.0f} | "
                    f"error: {entry['error']} | | | | | | | | |"
                )
                continue
            lines.append(
                f"| {build} | {entry['first_message_ms']:.0f} | "
                f"{fmt_rate(entry.get('during_compile_per_s'))} | "
                f"{fmt_rate(entry['idle_fallback_per_s'])} | "
                f"{fmt_rate(entry.get('slowest_second_per_s'))} | "
                f"{entry.get('longest_pause_ms', 0):,.0f} "
                f"({entry.get('batch_ms_median', 0):.1f}) | "
                f"{entry.get('reader_cpu_share_during_compile', 0):.0%} / "
                f"{entry['reader_cpu_share_idle']:.0%} | "
                f"{fmt_cpus(entry.get('other_processes_cpus_during_compile'))} / "
                f"{fmt_cpus(entry.get('other_processes_cpus_idle'))} | "
                f"{entry['swap_after_s']:.1f} | "
                f"{entry['build_s'] or 0:.1f} ({entry['child_processes_cpu_s']:.1f}) | "
                f"{fmt_rate(entry.get('compiled_per_s'))} |"
            )
        bad = [
            f"- {b}: the first message or a later one differs from confluent-kafka's reading"
            for b, e in never.items()
            if not e.get("first_message_correct", True) or e.get("wrong_after")
        ]
        lines += [""] + (bad + [""] if bad else [])

    notes = report.get("notes") or []
    if notes:
        lines += ["## Notes", ""] + [f"- {note}" for note in notes] + [""]
    return "\n".join(lines)


# -- main ------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.kafka", description=__doc__.split("\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="3 repeats and 100,000 messages instead of 15 and 1,000,000"
    )
    parser.add_argument(
        "--cases",
        help=f"comma-separated Avro cases of benchmarks/avro_schemas.py (default: {','.join(DEFAULT_CASES)})",
    )
    parser.add_argument("--groups", help=f"Avro cases by group instead: {', '.join(GROUPS)}, all")
    parser.add_argument(
        "--marshmallow-cases",
        default=",".join(MARSHMALLOW_CASES),
        help="comma-separated CompiledSchema cases of benchmarks/schemas.py ('' for none)",
    )
    parser.add_argument("--repeats", type=int, help="interleaved repeats (default 15, quick 3)")
    parser.add_argument(
        "--target-ms", type=float, default=30.0, help="target duration of one timed loop (default 30 ms)"
    )
    parser.add_argument(
        "--messages", type=int, help="messages per end-to-end run (default 1,000,000, quick 100,000)"
    )
    parser.add_argument("--e2e-case", default="trade", help="the end-to-end case (default trade)")
    parser.add_argument(
        "--rounds", type=int, default=1, help="end-to-end rounds, the best is reported (default 1)"
    )
    parser.add_argument(
        "--fields", type=int, default=200, help="fields of the never-blocked schema (default 200)"
    )
    parser.add_argument(
        "--settle-s", type=float, default=3.0, help="never blocked: seconds read after the swap (default 3)"
    )
    parser.add_argument("--skip-calls", action="store_true")
    parser.add_argument("--skip-e2e", action="store_true")
    parser.add_argument("--skip-never-blocked", action="store_true")
    parser.add_argument("--out", type=Path, default=RESULTS, help="output folder")
    parser.add_argument(
        "--render", action="store_true", help="only rewrite kafka.md from the output folder's kafka.json"
    )
    args = parser.parse_args(argv)
    if args.repeats is None:
        args.repeats = 3 if args.quick else 15
    if args.messages is None:
        args.messages = 100_000 if args.quick else 1_000_000
    return args


def selected_cases(args) -> list[str]:
    if args.cases:
        names = args.cases.split(",")
        unknown = [n for n in names if n not in AVRO_CASES]
        if unknown:
            raise SystemExit(f"unknown case(s) {unknown}; known: {', '.join(AVRO_CASES)}")
        return names
    if args.groups:
        from benchmarks.avro_schemas import cases as select

        return [c.name for c in select(None, args.groups.split(","))]
    return list(DEFAULT_CASES)


def main(argv: list[str] | None = None) -> dict:
    args = parse_args(argv)
    if args.render:
        report = json.loads((args.out / "kafka.json").read_text())
        (args.out / "kafka.md").write_text(markdown(report))
        print(f"wrote {args.out / 'kafka.md'} from kafka.json")
        return report
    started_all = time.perf_counter()

    def log(message: str) -> None:
        print(message, flush=True)

    services = load_services()
    env = environment(args, services)
    given = argv if argv is not None else sys.argv[1:]
    report: dict[str, Any] = {
        "environment": env,
        "notes": [],
        "command": " ".join(["python -m benchmarks.kafka", *given]),
    }
    log(
        f"roastedavro.kafka vs confluent-kafka: {env['mode']} mode; Python {env['python']}, "
        f"{env['cpu']}; compile cache {env['compile_cache']}"
    )

    if not args.skip_calls:
        names = selected_cases(args)
        marshmallow = [n for n in args.marshmallow_cases.split(",") if n]
        log(f"1. calls: {len(names) + len(marshmallow)} cases, {args.repeats} repeats")
        report["calls"] = run_calls(names, marshmallow, args.repeats, args.target_ms * 1e6, log)
        report["calls_summary"] = summarize_calls(report["calls"])
        for group, entry in report["calls_summary"].items():
            log(
                f"   geomean ({group}, {len(entry['cases'])} cases): "
                + ", ".join(f"{op} {fmt_x(entry[op]['geomean_ratio'])}" for op in OPS)
            )

    need_servers = not (args.skip_e2e and args.skip_never_blocked)
    kafka = registry = None
    missing = services.java_missing_reason() if need_servers else None
    if missing:
        report["notes"].append(f"end to end and never blocked on the registry not run: {missing}")
        log(f"no servers: {missing}")
    try:
        if need_servers and not missing:
            started = time.perf_counter()
            # from this (the main) thread: each JVM dies with the thread that started it
            registry = services.start_registry(wait=False)
            if not args.skip_e2e:
                kafka = services.start_kafka(wait=False)
                kafka.wait_ready()
            registry.wait_ready()
            report["servers_ready_s"] = round(time.perf_counter() - started, 1)
            log(
                f"servers: Kafka {kafka.bootstrap if kafka else '(not needed)'}, registry "
                f"{registry.url} (ready in {report['servers_ready_s']} s)"
            )
        if not args.skip_e2e and kafka is not None:
            log(f"2. end to end: {args.messages:,} {args.e2e_case} messages, {args.rounds} round(s)")
            try:
                report["e2e"] = run_e2e(
                    kafka, registry.url, args.e2e_case, args.messages, args.rounds, min(args.repeats, 5), log
                )
            except Exception as error:  # noqa: BLE001 - report, keep the other parts
                report["e2e"] = {"error": _short(error)}
                log(f"   ERROR {report['e2e']['error']}")
            e2e = report["e2e"]
            if "ratio" in e2e:
                log(
                    f"   ratio produce {fmt_x(e2e['ratio']['produce'])}, consume "
                    f"{fmt_x(e2e['ratio']['consume'])}; ceiling (no serializer / confluent-kafka) "
                    f"{fmt_x(e2e['ceiling_ratio']['produce'])}, "
                    f"{fmt_x(e2e['ceiling_ratio']['consume'])}"
                )
        if kafka is not None:  # the never-blocked part needs only the registry
            kafka.stop()
            kafka = None
        if not args.skip_never_blocked:
            if registry is not None:
                client = SchemaRegistryClient({"url": registry.url})
                report["never_blocked_registry"] = "apicurio"
            else:
                client = SchemaRegistryClient.new_client({"url": "mock://bench-never-blocked"})
                report["never_blocked_registry"] = "mock"
            log(f"3. never blocked: {args.fields} fields, fresh compile cache")
            report["never_blocked"] = run_never_blocked(
                client, args.fields, args.settle_s, COMPILE_TIMEOUT, log
            )
    finally:
        for service in (kafka, registry):
            if service is not None:
                service.stop()

    env["loadavg_at_end"] = [round(x, 2) for x in os.getloadavg()]
    report["elapsed_s"] = round(time.perf_counter() - started_all, 1)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "kafka.json").write_text(json.dumps(report, indent=1, default=str) + "\n")
    (args.out / "kafka.md").write_text(markdown(report))
    log(f"wrote {args.out / 'kafka.json'} and kafka.md in {report['elapsed_s']:.0f} s")
    return report


if __name__ == "__main__":
    main()
