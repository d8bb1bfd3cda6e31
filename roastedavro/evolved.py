"""Compiled one-pass readers of data written with another version of a
marshmallow schema (``load_compiled(data, writer_schema=...)``).

Where the writer's record differs from the schema's only in which fields it
has and in their order (fields added with defaults, dropped, moved; each
shared field of a type with the same bytes), a codec of the same schema is
generated whose root reader follows the writer's layout
(codegen.written_reader): each written field read by the schema's own field
code, the dropped ones skipped, the added ones read from their defaults'
bytes. Until it is built (the ``hot`` policy: in the background once the
pair has done enough work; ``eager``: at once), the Rearranger serves the
pair: the writer's bytes moved into the schema's layout, then read.
Other pairs are left to schema.py (the Rearranger alone, or read and
written again).
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Any, Callable

from roastedavro import compiler, tiers
from roastedavro._datum import encode_default
from roastedavro._tier0 import Interpreter
from roastedavro.avro.resolve import Read, RecordRef, equivalent, resolve
from roastedavro.avro.types import Primitive, Record
from roastedavro.avro.types import Schema as AvroSchema
from roastedavro.avroplan import _MinSizes
from roastedavro.codegen import generate_module
from roastedavro.emitter import FIELDS_PER_FUNCTION
from roastedavro.errors import CompileError
from roastedavro.flags import CompileFlags
from roastedavro.plans import RecordPlan


@dataclasses.dataclass(frozen=True)
class WrittenStep:
    """One step of the root reader, in the writer's order: read ``field``
    (the schema's field plan) from the data or, where ``default`` is set,
    from its default's bytes; or skip a value (the type at node ``skip_node``
    of ``skip``, the writer's schema's Interpreter)."""

    writer_name: str
    field: Any = None
    skip: Any = None    # an Interpreter of the writer's schema
    skip_node: int = 0  # the node of the field's type in it
    default: bytes | None = None


@dataclasses.dataclass(frozen=True)
class WrittenLayout:
    """How a writer's root record is read as the schema's, in one pass."""

    steps: tuple
    #: the fewest bytes a writer's record takes (bounds many=True counts)
    min_size: int
    writer_fingerprint: str


def written_layout(root: RecordPlan, reader: AvroSchema, writer: AvroSchema,
                   flags: CompileFlags) -> WrittenLayout | None:
    """The layout of a one-pass reader of ``writer``'s records as ``root``'s
    (whose Avro schema is ``reader``), or None where one pass cannot read
    them with the schema's own field code: a root that is not a record, a
    shared field whose bytes differ or need a check of their own (a
    promotion, int to long included, a remapped enum, a value that became
    a union, a nested record that changed), a field name the writer
    repeats, a record wider than one generated function. Resolution errors are the
    caller's (it checked the pair first)."""
    writer_root, reader_root = writer.deref(writer.root), reader.deref(reader.root)
    if not isinstance(writer_root, Record) or not isinstance(reader_root, Record):
        return None
    if max(len(writer_root.fields), len(reader_root.fields)) > FIELDS_PER_FUNCTION:
        return None
    resolution = resolve(writer, reader)
    if not isinstance(resolution.root, RecordRef):
        return None
    record = resolution.record(resolution.root)
    if record.error is not None:
        return None
    plans = {plan.avro_name: plan for plan in root.fields}
    steps = []
    read = set()
    skipper = None    # the writer's schema, whose nodes skip the fields dropped
    for step in record.steps:
        if step.reader is None:
            # skipped with the Rearranger's checks (strings are not decoded)
            if skipper is None:
                skipper = Interpreter(writer, flags)
            node = skipper.field_node(writer_root.name, step.writer.name)
            steps.append(WrittenStep(step.writer.name, skip=skipper, skip_node=node))
            continue
        plan = plans.get(step.reader.name)
        # the same types, or a string read as bytes (the same bytes, nothing
        # to check); an int read as a long is left to the Rearranger, which
        # checks the writer's 32-bit range. A field name a (fastavro
        # dialect) writer repeats is too: its first value is the one read.
        if plan is None or step.reader.name in read or not (
                equivalent(writer, reader, step.writer.type, step.reader.type)
                or _string_as_bytes(writer, reader, step.plan)):
            return None
        read.add(step.reader.name)
        steps.append(WrittenStep(step.writer.name, field=plan))
    for field in record.defaults:
        plan = plans.get(field.name)
        if plan is None:
            return None
        if plan.field.dump_only:
            continue    # nothing to load, nothing on the wire
        encoded = encode_default(field.type, field.default, reader,
                                 f"{reader_root.name}.{field.name}")
        steps.append(WrittenStep(field.name, field=plan, default=encoded))
    return WrittenLayout(tuple(steps), _MinSizes(writer).of(writer_root), writer.fingerprint_hex)


def _string_as_bytes(writer: AvroSchema, reader: AvroSchema, plan) -> bool:
    if not isinstance(plan, Read):
        return False
    written, wanted = writer.deref(plan.writer), reader.deref(plan.reader)
    return (isinstance(written, Primitive) and written.name == "string"
            and isinstance(wanted, Primitive) and wanted.name == "bytes")


class EvolvedPair:
    """The codecs serving one writer schema's data for a CompiledSchema:
    the Rearranger at once, the one-pass codec once it is built or found
    (tiers.Engine). ``on_change(old, new)`` is told when the codec replaces
    the Rearranger; ``bind(codec)`` sets a built codec's entry points."""

    def __init__(self, schema: Any, flags: CompileFlags, layout: WrittenLayout, rearranger: Any,
                 bind: Callable[[Any], None], on_change: Callable[[Any, Any], None]):
        self.schema = schema
        self.flags = flags
        self.layout = layout
        self.rearranger = rearranger
        self._bind = bind
        self._on_change = on_change
        self.engine = tiers.Engine(self._what, lambda: rearranger, self._build)
        self.engine.subscribe(self)

    def _what(self) -> str:
        return (f"the CompiledSchema {self.schema._label()} reading data written with "
                f"{self.layout.writer_fingerprint}")

    def start(self) -> Any:
        """What serves the pair now, under the process's compile policy."""
        try:
            return self.engine.start(tiers.compile_policy(None, default="hot"))
        except CompileError as error:
            # the Rearranger reads the same data; the failure is reported once
            logging.getLogger("roastedavro.evolved").warning(
                "%s is served without its one-pass codec: %s", self._what(), error)
            return self.engine._serve_interpreter()

    def _build(self, where: str) -> Any:
        plan = self.schema._plan()
        generated = generate_module(plan.root, plan.records, self.schema._label(),
                                    self.flags.build_key(), plan.fingerprint, written=self.layout)
        module = compiler.load(generated.source, self.flags, verify=generated.verify,
                               fingerprint=plan.fingerprint,
                               build="never" if where == "lookup" else where, label=self._what())
        codec = module.Codec(generated.bindings, self.flags.max_depth, self.flags.max_items,
                             self.flags.item_allowance)
        self._bind(codec)
        return codec

    def _rebind(self) -> None:
        current = self.engine.current
        if current is not self.rearranger:
            self._on_change(self.rearranger, current)
