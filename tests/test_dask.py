"""roastedavro.dask: container files read into Dask DataFrames and Bags in
partitions split at sync markers, and DataFrames written a file per
partition."""

from __future__ import annotations

import datetime
import decimal
import os

import fastavro
import pytest

dd = pytest.importorskip("dask.dataframe")
pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")

import dask  # noqa: E402

from roastedavro.arrow import read_table  # noqa: E402
from roastedavro.container import ContainerError, block_reader  # noqa: E402
from roastedavro.dask import read_avro, read_avro_bag, to_avro  # noqa: E402
from roastedavro.errors import DatumError, DecodeError  # noqa: E402

SCHEMA = {
    "type": "record",
    "name": "Event",
    "namespace": "test",
    "fields": [
        {"name": "id", "type": "int"},
        {"name": "name", "type": "string"},
        {"name": "score", "type": ["null", "double"]},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
        {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["OPEN", "CLOSE", "MOVE"]}},
    ],
}


def events(count: int, first: int = 0) -> list[dict]:
    return [
        {
            "id": n,
            "name": f"event-{n}" + "x" * (n % 13),
            "score": None if n % 7 == 0 else n / 4,
            "tags": [f"t{k}" for k in range(n % 4)],
            "kind": ("OPEN", "CLOSE", "MOVE")[n % 3],
        }
        for n in range(first, first + count)
    ]


def write(path, records, schema=SCHEMA, **options) -> str:
    with open(path, "wb") as fo:
        fastavro.writer(fo, fastavro.parse_schema(schema), records, sync_interval=2000, **options)
    return str(path)


def single(path, **options) -> pd.DataFrame:
    """The single-process read the partitions must add up to."""
    return read_table(path, **options).to_pandas(types_mapper=pd.ArrowDtype)


def together(frame: dd.DataFrame, **compute) -> pd.DataFrame:
    return frame.compute(**compute).reset_index(drop=True)


@pytest.fixture(scope="module", autouse=True)
def threads_and_tier0():
    # the tests' own scheduler (a Bag's default is processes); the cluster's test uses its
    # client. tests/conftest.py compiles every codec first (eager): the partitions read and
    # write through tier 0, as an ordinary process's first files are (the cluster's workers
    # inherit the setting), and the compiled codecs are tested with roastedavro.arrow's
    with pytest.MonkeyPatch.context() as patch, dask.config.set(scheduler="threads"):
        patch.setenv("ROASTEDAVRO_COMPILE", "hot")
        yield


@pytest.fixture(scope="module")
def big(tmp_path_factory) -> str:
    return write(tmp_path_factory.mktemp("big") / "events.avro", events(5000), codec="deflate")


def test_a_file_split_into_partitions_reads_every_record_once(big):
    frame = read_avro(big, blocksize=8 * 1024)
    assert frame.npartitions == -(-os.path.getsize(big) // (8 * 1024)) > 4
    got = together(frame)
    pd.testing.assert_frame_equal(got, single(big))
    with open(big, "rb") as fo:
        expected = list(fastavro.reader(fo))
    assert got["id"].tolist() == [r["id"] for r in expected]
    assert got["name"].tolist() == [r["name"] for r in expected]
    assert [None if pd.isna(s) else s for s in got["score"]] == [r["score"] for r in expected]
    assert [list(t) for t in got["tags"]] == [r["tags"] for r in expected]
    assert got["kind"].astype(str).tolist() == [r["kind"] for r in expected]


def test_the_dtypes_are_arrow_backed_and_known_without_reading_records(big):
    frame = read_avro(big, blocksize=None)
    assert frame.npartitions == 1
    dtypes = frame.dtypes.to_dict()
    assert all(isinstance(dtype, pd.ArrowDtype) for dtype in dtypes.values())
    assert dtypes["id"].pyarrow_dtype == pa.int32()
    assert dtypes["tags"].pyarrow_dtype == pa.list_(pa.field("item", pa.string(), nullable=False))
    assert dtypes["kind"].pyarrow_dtype == pa.dictionary(pa.int32(), pa.string())
    assert frame.compute().dtypes.to_dict() == dtypes


def test_every_kind_of_column_reaches_the_frame(tmp_path):
    schema = {
        "type": "record",
        "name": "Mixed",
        "fields": [
            {"name": "union", "type": ["int", "string", "null"]},
            {"name": "counts", "type": {"type": "map", "values": "long"}},
            {
                "name": "inner",
                "type": {"type": "record", "name": "Inner", "fields": [{"name": "a", "type": "int"}]},
            },
            {"name": "pair", "type": {"type": "fixed", "name": "Pair", "size": 2}},
            {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
            {
                "name": "price",
                "type": {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2},
            },
        ],
    }
    records = [
        {
            "union": (n, f"s{n}", None)[n % 3],
            "counts": {f"k{k}": k for k in range(n % 3)},
            "inner": {"a": n},
            "pair": bytes([n % 256, 7]),
            "at": datetime.datetime.fromtimestamp(n, datetime.timezone.utc),
            "price": decimal.Decimal(n) / 100,
        }
        for n in range(300)
    ]
    path = write(tmp_path / "mixed.avro", records, schema=schema)
    frame = read_avro(path, blocksize=512)
    assert frame.npartitions > 3
    got = together(frame)
    table = read_table(path)
    assert list(frame.dtypes) == [pd.ArrowDtype(field.type) for field in table.schema]
    for name in table.column_names:
        # (pandas holds a dense_union but cannot compare or print one: the Arrow arrays are compared)
        assert (
            pa.chunked_array(got[name].array.__arrow_array__()).to_pylist() == table.column(name).to_pylist()
        )
    # and written again in a schema derived from the frame's meta
    written = to_avro(frame.repartition(npartitions=2), str(tmp_path / "again"))
    again = pa.concat_tables([read_table(path) for path in written])
    assert again.to_pylist() == table.to_pylist()


def test_range_bounds_at_block_starts_inside_markers_and_between(tmp_path):
    path = write(tmp_path / "few.avro", events(600))
    with open(path, "rb") as fo:
        offsets = [block.offset for block in block_reader(fo)]
    expected = single(path)
    size = os.path.getsize(path)
    # ranges starting exactly at each block's start, 5 bytes into each sync marker,
    # and ranges far smaller than a block (most have no block start)
    for blocksize in (offsets[2] - offsets[1], offsets[1] - 5, offsets[1], 97, size - 1, size, size * 3):
        frame = read_avro(path, blocksize=blocksize)
        pd.testing.assert_frame_equal(together(frame), expected)
    small = read_avro(path, blocksize=97)
    lengths = small.map_partitions(len).compute().tolist()
    assert 0 in lengths and sum(lengths) == 600 and max(lengths) > 0
    assert read_avro(path, blocksize=size * 3).npartitions == 1  # a file smaller than blocksize


def test_several_files_a_glob_and_a_list(tmp_path):
    paths = [write(tmp_path / f"part-{n}.avro", events(300, first=300 * n)) for n in range(3)]
    expected = pd.concat([single(p) for p in paths], ignore_index=True)
    by_glob = read_avro(str(tmp_path / "part-*.avro"), blocksize=4000)
    assert by_glob.npartitions > 3
    pd.testing.assert_frame_equal(together(by_glob), expected)
    pd.testing.assert_frame_equal(together(read_avro(paths, blocksize=None)), expected)
    pd.testing.assert_frame_equal(together(read_avro(f"file://{tmp_path}/part-*.avro")), expected)
    with pytest.raises(FileNotFoundError, match="no file"):
        read_avro(str(tmp_path / "nothing-*.avro"))


def test_columns_and_a_reader_schema_pass_through(big):
    frame = read_avro(big, blocksize=20000, columns=["name", "id"])
    assert list(frame.columns) == ["name", "id"]
    pd.testing.assert_frame_equal(together(frame), single(big, columns=["name", "id"]))
    # Dask's own projection reads only the column asked
    assert frame["id"].sum().compute() == sum(range(5000))
    assert together(read_avro(big, blocksize=20000)[["kind"]]).equals(single(big, columns=["kind"]))
    with pytest.raises(KeyError, match="nope"):
        read_avro(big, columns=["nope"])
    evolved = {
        "type": "record",
        "name": "Event",
        "namespace": "test",
        "fields": [
            {"name": "id", "type": "long"},
            {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["MOVE", "CLOSE", "OPEN"]}},
            {"name": "region", "type": "string", "default": "eu"},
        ],
    }
    frame = read_avro(big, blocksize=20000, reader_schema=evolved)
    assert frame.dtypes["id"].pyarrow_dtype == pa.int64()
    got = together(frame)
    pd.testing.assert_frame_equal(got, single(big, reader_schema=evolved))
    assert set(got["region"]) == {"eu"}
    assert got["kind"].astype(str).tolist()[:3] == ["OPEN", "CLOSE", "MOVE"]


def test_dask_s_column_projection_reaches_the_reader(big, monkeypatch):
    import roastedavro.dask

    asked = []

    def reading(source, columns=None, **options):
        asked.append(columns)
        return read_table(source, columns=columns, **options)

    monkeypatch.setattr(roastedavro.dask, "read_table", reading)
    frame = read_avro(big, blocksize=20000)
    assert frame["score"].count().compute() == 5000 - len(range(0, 5000, 7))
    assert asked and all(columns == ["score"] for columns in asked)


def test_files_of_another_schema_need_a_reader_schema(tmp_path):
    write(tmp_path / "a.avro", events(10))
    other = {"type": "record", "name": "Other", "fields": [{"name": "id", "type": "long"}]}
    write(tmp_path / "b.avro", [{"id": 1}], schema=other)
    with pytest.raises(ValueError, match="reader_schema"):
        read_avro(str(tmp_path / "*.avro")).compute()


def damage(path: str) -> int:
    """Overwrite the records of a block in the middle of the file; its offset."""
    with open(path, "rb") as fo:
        offsets = [block.offset for block in block_reader(fo)]
        fo.seek(0)
        data = bytearray(fo.read())
    where = offsets[len(offsets) // 2]
    data[where + 4 : where + 40] = b"\xfe" * 36
    with open(path, "wb") as fo:
        fo.write(data)
    return where


def test_a_damaged_block_is_the_library_s_error(tmp_path):
    path = write(tmp_path / "events.avro", events(2000))
    where = damage(path)
    with pytest.raises(ContainerError) as caught:
        read_avro(path, blocksize=8000).compute()
    assert isinstance(caught.value, DecodeError) and caught.value.offset == where
    assert f"(at byte offset {where})" in str(caught.value)
    with pytest.raises(ContainerError):
        read_avro_bag(path, blocksize=8000).compute()


def test_a_bag_of_the_records(big):
    bag = read_avro_bag(big, blocksize=8 * 1024)
    assert bag.npartitions > 4
    with open(big, "rb") as fo:
        assert bag.compute() == list(fastavro.reader(fo))
    names = read_avro_bag(big, blocksize=8 * 1024, columns=["name"])
    assert names.take(2) == ({"name": "event-0"}, {"name": "event-1x"})


def test_to_avro_writes_a_file_per_partition_and_reads_back(tmp_path, big):
    frame = read_avro(big, blocksize=None).repartition(npartitions=3)
    written = to_avro(frame, str(tmp_path / "out"), schema=SCHEMA, codec="deflate")
    assert written == [str(tmp_path / "out" / f"part.{n}.avro") for n in range(3)]
    with open(big, "rb") as fo:
        expected = list(fastavro.reader(fo))
    theirs = []
    for path in written:
        with open(path, "rb") as fo:
            reader = fastavro.reader(fo)
            assert reader.codec == "deflate"
            theirs += list(reader)
    assert theirs == expected
    pd.testing.assert_frame_equal(together(read_avro(str(tmp_path / "out"))), single(big))
    assert sorted(os.listdir(tmp_path / "out")) == ["part.0.avro", "part.1.avro", "part.2.avro"]


def test_to_avro_derives_one_schema_from_the_frame(tmp_path):
    pandas_frame = pd.DataFrame(
        {
            "id": pd.array(range(30), dtype=pd.ArrowDtype(pa.int64())),
            "name": pd.array(
                [f"n{n}" if n % 5 else None for n in range(30)], dtype=pd.ArrowDtype(pa.string())
            ),
            "ratio": [n / 3 for n in range(30)],
        }
    )
    frame = dd.from_pandas(pandas_frame, npartitions=3)
    written = to_avro(frame, str(tmp_path / "rows-*.avro"), name_function=lambda n: f"{n:03d}")
    assert [os.path.basename(p) for p in written] == ["rows-000.avro", "rows-001.avro", "rows-002.avro"]
    schemas = set()
    for path in written:
        with open(path, "rb") as fo:
            schemas.add(str(fastavro.reader(fo).writer_schema))
    assert len(schemas) == 1
    back = together(read_avro(str(tmp_path / "rows-*.avro")))
    assert back["id"].tolist() == list(range(30))
    assert back["name"].tolist() == pandas_frame["name"].tolist()
    assert back["ratio"].tolist() == pandas_frame["ratio"].tolist()
    with dask.config.set({"dataframe.convert-string": False}):  # (Dask makes them strings)
        objects = dd.from_pandas(pd.DataFrame({"any": pd.Series([[1], None], dtype=object)}), npartitions=1)
        with pytest.raises(TypeError, match="schema="):
            to_avro(objects, str(tmp_path / "objects"))


def test_to_avro_makes_enums_of_known_categories_and_checks_columns_first(tmp_path):
    pandas_frame = pd.DataFrame({"n": range(6), "kind": pd.Categorical(["OPEN", "MOVE"] * 3)})
    frame = dd.from_pandas(pandas_frame, npartitions=2)
    written = to_avro(frame, str(tmp_path / "cats"))
    with open(written[0], "rb") as fo:
        kind = fastavro.reader(fo).writer_schema["fields"][1]["type"]
    assert kind[1]["type"] == "enum" and kind[1]["symbols"] == ["MOVE", "OPEN"]
    schema = {"type": "record", "name": "Row", "fields": [{"name": "n", "type": "long"}]}
    with pytest.raises(ValueError, match="'kind' is no field"):
        to_avro(frame, str(tmp_path / "refused"), schema=schema)
    assert not (tmp_path / "refused").exists()


def test_urls_through_fsspec(big):
    frame = read_avro(big, blocksize=8 * 1024)
    written = to_avro(frame.repartition(npartitions=2), "memory://dask-test/events-*.avro", schema=SCHEMA)
    assert written == ["memory:///dask-test/events-0.avro", "memory:///dask-test/events-1.avro"]
    back = read_avro("memory://dask-test/events-*.avro", blocksize=8 * 1024)
    assert back.npartitions > 2
    pd.testing.assert_frame_equal(together(back), single(big))


def test_a_failing_partition_leaves_no_file(tmp_path):
    schema = {"type": "record", "name": "Row", "fields": [{"name": "n", "type": "int"}]}
    numbers = list(range(600))
    numbers[350] = 2**40  # late in the second partition: blocks before it are written
    frame = dd.from_pandas(pd.DataFrame({"n": numbers}), npartitions=3)
    # one partition at a time: none is left running when to_avro raises
    with pytest.raises(DatumError, match="n"):
        to_avro(
            frame,
            str(tmp_path / "out"),
            schema=schema,
            sync_interval=50,
            compute_kwargs={"scheduler": "sync"},
        )
    left = sorted(os.listdir(tmp_path / "out"))
    assert "part.1.avro" not in left and not [name for name in left if not name.endswith(".avro")]
    for name in left:  # a partition written before the failure is whole
        with open(tmp_path / "out" / name, "rb") as fo:
            assert len(list(fastavro.reader(fo))) == 200


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster, set_as_default=False) as client,
    ):
        yield client


@pytest.mark.cluster
def test_on_a_cluster_of_two_worker_processes(client, big, tmp_path):
    frame = read_avro(big, blocksize=8 * 1024)
    got = frame.compute(scheduler=client).reset_index(drop=True)
    pd.testing.assert_frame_equal(got, single(big))
    assert read_avro_bag(big, blocksize=8 * 1024).count().compute(scheduler=client) == 5000
    written = to_avro(
        frame.repartition(npartitions=3),
        str(tmp_path / "out"),
        schema=SCHEMA,
        compute_kwargs={"scheduler": client},
    )
    assert len(written) == 3
    pd.testing.assert_frame_equal(together(read_avro(str(tmp_path / "out"))), single(big))
    where = damage(write(tmp_path / "damaged.avro", events(2000)))
    with pytest.raises(ContainerError) as caught:
        read_avro(str(tmp_path / "damaged.avro"), blocksize=8000).compute(scheduler=client)
    assert caught.value.offset == where
