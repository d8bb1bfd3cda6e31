"""What the drop-in's check of a schema dict costs per call.

The fastavro drop-in keeps its codecs by the schema object the caller passes
and, for a dict, checks before each call that it was not changed in place
(roastedavro._runtime.SchemaShape: each dict's version tag, each list's
items). Schema text cannot change and is not checked. This times
``schemaless_writer`` and ``schemaless_reader`` with the same schema given
both ways, in one process, the four contenders interleaved over nine rounds
(median of each round's best of three 20,000-call loops), for records of 4,
10 and 50 fields (a quarter of them ["null", "string"] unions, each a list
to check; the others null, long or string).

    python -m benchmarks.schema_checks

Prints a table; writes nothing.
"""

from __future__ import annotations

import io
import json
import timeit

import roastedavro.fastavro as dropin


def case(fields: int) -> tuple[dict, dict]:
    kinds = ["null", "long", "string"]
    schema = {
        "type": "record",
        "name": f"Checked{fields}",
        "fields": [
            {"name": f"f{i}", "type": kinds[i % 3] if i % 4 else ["null", "string"]} for i in range(fields)
        ],
    }
    record = {f"f{i}": ([None, 5, "x"][i % 3] if i % 4 else "y") for i in range(fields)}
    return schema, record


def main() -> None:
    print("| fields | write dict ns | write text ns | check | read dict ns | read text ns | check |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for fields in (4, 10, 50):
        schema, record = case(fields)
        text = json.dumps(schema)
        out = io.BytesIO()

        def write(given):
            out.seek(0)
            dropin.schemaless_writer(out, given, record)

        write(schema)
        write(text)
        data = out.getvalue()

        def read(given):
            dropin.schemaless_reader(io.BytesIO(data), given)

        contenders = {
            "write dict": lambda: write(schema),
            "write text": lambda: write(text),
            "read dict": lambda: read(schema),
            "read text": lambda: read(text),
        }
        samples: dict[str, list[float]] = {name: [] for name in contenders}
        for _ in range(9):
            for name, call in contenders.items():
                samples[name].append(min(timeit.repeat(call, number=20000, repeat=3)) / 20000 * 1e9)
        ns = {name: sorted(values)[len(values) // 2] for name, values in samples.items()}
        print(
            f"| {fields} | {ns['write dict']:,.0f} | {ns['write text']:,.0f} | "
            f"+{ns['write dict'] - ns['write text']:,.0f} | {ns['read dict']:,.0f} | "
            f"{ns['read text']:,.0f} | +{ns['read dict'] - ns['read text']:,.0f} |"
        )


if __name__ == "__main__":
    main()
