"""Reading a results store writes nothing: the shipped atlas (a WAL database) read through
`flat_rows` leaves no `-shm`/`-wal` files and the same bytes; a store being written is read
beside its writer."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pipebounds.sweep import flat_rows
from pipebounds.sweep.store import Store

ATLAS = Path(__file__).resolve().parent.parent / "data" / "atlas" / "atlas.sqlite"


def test_reading_the_atlas_creates_no_files(tmp_path):
    copy = tmp_path / "atlas.sqlite"
    shutil.copyfile(ATLAS, copy)
    before = copy.read_bytes()
    rows = flat_rows(copy)
    assert rows and sorted(p.name for p in tmp_path.iterdir()) == ["atlas.sqlite"]
    with Store(copy, read_only=True) as store:  # held open (a notebook): still nothing beside it
        assert len(store) > 0
        assert sorted(p.name for p in tmp_path.iterdir()) == ["atlas.sqlite"]
    assert copy.read_bytes() == before


def test_read_only_beside_a_writer_and_no_store(tmp_path):
    path = tmp_path / "s.sqlite"
    with Store(path) as writer:
        writer.add("k", "bound", {"instance": {"P": 2, "m": 2}}, "ok", [{"lower_bound": 6}], 0.1)
        with Store(path, read_only=True) as reader:  # the writer's -wal is there: mode=ro
            assert len(reader) == 1
            with pytest.raises(Exception):
                reader._db.execute("DELETE FROM results")
    with pytest.raises(FileNotFoundError):
        Store(tmp_path / "missing.sqlite", read_only=True)
    assert not (tmp_path / "missing.sqlite").exists()
