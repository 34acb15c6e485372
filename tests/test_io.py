"""Reading tables (JSONL, CSV) and writing outputs atomically: editf1.io."""

from __future__ import annotations

import io
import json
import os
import re
import stat
import sys
import warnings
from pathlib import Path

import pytest

from editf1.inputs import InputError
from editf1.io import (
    JsonlWriter,
    TableRows,
    atomic_output,
    check_output_path,
    read_csv,
    read_jsonl,
    read_rows,
    same_file,
    staged_folder,
)

SECRET = "Patient Jane Roe"  # row text that no message may quote


def _stdin(monkeypatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))


# -- CSV -----------------------------------------------------------------------------------
def test_csv_unclosed_quote_names_the_line_instead_of_swallowing_rows(tmp_path):
    path = tmp_path / "pairs.csv"
    path.write_text(f'prediction,reference\na.,b.\n"{SECRET},c.\nd.,e.\nf.,g.\n')
    with pytest.raises(ValueError, match=r"pairs.csv, line 3: a quoted cell .* never closed") as e:
        read_csv(path)
    assert SECRET not in str(e.value)


def test_csv_text_after_a_closing_quote_is_an_error_naming_the_line(tmp_path):
    path = tmp_path / "pairs.csv"
    path.write_text(f'prediction,reference\na.,b.\n"{SECRET}"x,c.\n')
    with pytest.raises(ValueError, match=r"pairs.csv, line 3: badly quoted cell") as e:
        read_csv(path)
    assert SECRET not in str(e.value)


def test_csv_reads_quoted_line_breaks_long_cells_and_skips_blank_lines(tmp_path):
    path = tmp_path / "pairs.csv"
    long = "word " * 40_000  # 200,000 characters: above the csv module's 131,072 default
    path.write_text(f'id,prediction,reference\n1,"Rest.\nCall, ""now"".",{long}\n\n2,x.,y.\n')
    rows = read_csv(path, ["prediction"])
    assert isinstance(rows, TableRows) and rows.columns == ["id", "prediction", "reference"]
    assert rows[0] == {"id": "1", "prediction": 'Rest.\nCall, "now".', "reference": long}
    assert rows[1] == {"id": "2", "prediction": "x.", "reference": "y."}
    import csv

    assert csv.field_size_limit() == 131_072  # the global limit is restored


def test_csv_rows_with_too_many_or_too_few_cells_are_listed_without_their_text(tmp_path):
    path = tmp_path / "pairs.csv"
    path.write_text(f"prediction,reference\na.,b.\n{SECRET},b.,{SECRET}\nonly\n")
    with pytest.raises(InputError) as e:
        read_csv(path)
    assert e.value.errors == [
        f"{path}, line 3: 3 cells for 2 columns",
        f"{path}, line 4: 1 cells for 2 columns",
    ]


def test_csv_header_checks_and_tsv(tmp_path):
    path = tmp_path / "pairs.tsv"
    path.write_text("prediction\treference\na, b.\tc.\n")
    assert read_rows(path, ["prediction", "reference"]) == [
        {"prediction": "a, b.", "reference": "c."}
    ]
    assert read_rows(path, ["prediction"]).lines == [2]  # the header is line 1
    with pytest.raises(ValueError) as e:
        read_rows(path, ["id", "prediction"], named_by={"id": "--id-field"})
    assert str(e.value) == (
        f"{path}: no column 'id' (--id-field); the header has ['prediction', 'reference']"
    )
    # a header naming no column asked for, whose cells look like names, is shown
    with pytest.raises(ValueError) as e:
        read_rows(path, ["id"])
    assert str(e.value) == f"{path}: no column 'id'; the header has ['prediction', 'reference']"
    close = tmp_path / "close.csv"
    close.write_text("reference,Rest 1\na,b\n")  # not all names: hidden, a close one named
    with pytest.raises(ValueError) as e:
        read_rows(close, ["references"])
    assert str(e.value) == (
        f"{close}: no column 'references'; the header has 2 cells, not shown: none is a column "
        "asked for, so it may be a data row (give the file a header row); close to a column "
        "asked for: ['reference']"
    )
    repeated = tmp_path / "repeated.csv"
    repeated.write_text("a,a\n1,2\n")
    with pytest.raises(ValueError, match=r"the header repeats column\(s\) \['a'\]"):
        read_csv(repeated, ["a"])
    with pytest.raises(ValueError, match=r"first row repeats cells \(columns \[1, 2\]\)") as e:
        read_csv(repeated)
    assert "'a'" not in str(e.value)
    # the rows may have a real header that repeats a name: the message says both
    assert "either it is a header that repeats a column name, or the file has no header" in (
        str(e.value)
    )


@pytest.mark.parametrize(
    "first_row",
    [
        f"{SECRET},Rest today.",  # text: spaces
        "MRN-0012345,lisinopril",  # an identifier: digits
    ],
)
def test_a_first_row_that_may_be_data_is_never_shown(tmp_path, first_row):
    """Without a header row, the first row is a patient's: a header that names no column
    asked for is shown only when every cell looks like a name (a word, no digit)."""
    path = tmp_path / "pairs.csv"
    path.write_text(f"{first_row}\nb,c\n")
    with pytest.raises(ValueError) as e:
        read_rows(path, ["prediction", "reference"])
    assert str(e.value) == (
        f"{path}: no column 'prediction' or 'reference'; the header has 2 cells, not shown: "
        "none is a column asked for, so it may be a data row (give the file a header row)"
    )


def test_a_missing_column_is_one_line_naming_the_options_and_the_columns_there(tmp_path):
    """A file of 1,000 rows keyed draft/reply: one message, not one per row, naming the
    options and the file's columns, never a value."""
    named_by = {"prediction": "--prediction-field", "reference": "--reference-field"}
    jsonl = tmp_path / "pairs.jsonl"
    jsonl.write_text((json.dumps({"draft": SECRET, "reply": SECRET}) + "\n") * 1000)
    with pytest.raises(InputError) as e:
        read_rows(jsonl, ["prediction", "reference"], named_by=named_by)
    assert e.value.errors == [
        f"{jsonl}: no field 'prediction' (--prediction-field) or 'reference' "
        "(--reference-field) on any of its 1000 lines; its rows have ['draft', 'reply']"
    ]
    csv_path = tmp_path / "pairs.csv"
    csv_path.write_text(f"draft,reply\n{SECRET},{SECRET}\n" + "a,b\n" * 999)
    with pytest.raises(ValueError) as e:
        read_rows(csv_path, ["prediction", "reference"], named_by=named_by)
    assert str(e.value) == (
        f"{csv_path}: no column 'prediction' (--prediction-field) or 'reference' "
        "(--reference-field); the header has ['draft', 'reply']"
    )


def test_fields_missing_on_some_lines_name_those_lines(tmp_path):
    path = tmp_path / "pairs.jsonl"
    rows = [{"id": i, "prediction": "a.", "reference": "b."} for i in range(30)]
    for i in (3, 7, 20):  # lines 4, 8 and 21
        del rows[i]["reference"]
    del rows[9]["prediction"]  # line 10
    rows[9][SECRET] = 1  # a key that is text: counted, not shown
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(InputError) as e:
        read_rows(path, ["prediction", "reference"], named_by={"reference": "--reference-field"})
    assert e.value.errors == [
        f"{path}: no field 'reference' (--reference-field) on lines 4, 8 and 21 (3 of 30 "
        "lines); no field 'prediction' on line 10; those lines have ['id', 'prediction', "
        "'reference'] and 1 key not shown (not like a name)"
    ]


def test_rows_know_their_lines(tmp_path):
    jsonl = tmp_path / "pairs.jsonl"
    jsonl.write_text('\n{"a": 1}\n\n{"a": 2, "b": 3}\n')
    rows = read_rows(jsonl, ["a"])
    assert (rows, rows.lines, rows.columns) == ([{"a": 1}, {"a": 2, "b": 3}], [2, 4], ["a", "b"])
    assert [str(place) for place in rows.locations()] == [f"{jsonl}, line 2", f"{jsonl}, line 4"]
    assert rows.where([0, 1]) == f"{jsonl}, lines 2 and 4"
    csv_path = tmp_path / "pairs.csv"
    csv_path.write_text('a,b\n"x\ny",1\n\nz,2\n')  # a quoted line break; a blank line
    assert read_rows(csv_path, ["a"]).lines == [2, 5]


# -- JSONL ---------------------------------------------------------------------------------
def test_jsonl_with_a_byte_order_mark_line_numbers_and_u2028(tmp_path):
    path = tmp_path / "pairs.jsonl"
    text = json.dumps({"prediction": "a\u2028b.", "reference": "c."}, ensure_ascii=False)
    second = '{"prediction": "x", "reference": "y"}'
    path.write_bytes(f"\ufeff{text}\n\n{second}\n".encode())
    assert read_jsonl(path, ["prediction"]) == [
        (1, {"prediction": "a\u2028b.", "reference": "c."}),
        (3, {"prediction": "x", "reference": "y"}),
    ]


def test_jsonl_bad_lines_are_listed_by_type_never_by_text(tmp_path):
    path = tmp_path / "pairs.jsonl"
    lines = [
        f'["{SECRET}"]',
        f'{{"prediction": "{SECRET}"',
        f'{{"reference": "{SECRET}"}}',
        f'{{"{SECRET}": "x", "id": 1}}',  # text written as a key
        f'{{"prediction": "x", "prediction": "{SECRET}", "reference": "y"}}',
        f'{{"prediction": "x", "{SECRET}": 1, "{SECRET}": 2, "reference": "y"}}',
    ]
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError) as e:
        read_rows(path, ["prediction", "reference"])
    assert e.value.errors == [
        f"{path}, line 1: expected a JSON object, got list",
        # the line is 33 characters long: the missing "}" is at column 34
        f"{path}, line 2: not valid JSON (Expecting ',' delimiter at column 34)",
        # JSON would keep the last value: the first draft would be lost without a word
        f"{path}, line 5: field 'prediction' is given twice; JSON would keep only the last",
        f"{path}, line 6: a key (not shown) is given twice; JSON would keep only the last",
        # the missing fields: one message; a key that is text (a space) is not shown
        f"{path}: no field 'prediction' on lines 3 and 4; no field 'reference' on line 4; "
        "those lines have ['reference', 'id'] and 1 key not shown (not like a name)",
    ]
    assert all(SECRET not in error for error in e.value.errors)


# -- encodings, standard input, formats -----------------------------------------------------
@pytest.mark.parametrize("name", ["pairs.csv", "pairs.jsonl"])
def test_non_utf8_input_names_file_line_and_column(tmp_path, name):
    path = tmp_path / name
    path.write_bytes(b'{"prediction": "a", "reference": "b"}\nab\xe9c\n')
    with pytest.raises(ValueError) as e:
        read_rows(path, [])
    assert str(e.value) == (
        f"{path}, line 2: byte 0xe9 at column 3 is not UTF-8; save the file as UTF-8"
    )


def test_standard_input_is_jsonl_unless_told_csv(monkeypatch):
    _stdin(monkeypatch, b'{"prediction": "a", "reference": "b"}\n')
    assert read_rows("-", ["prediction"]) == [{"prediction": "a", "reference": "b"}]
    _stdin(monkeypatch, b"\xef\xbb\xbfprediction,reference\na,b\n")
    assert read_rows("-", ["reference"], "csv") == [{"prediction": "a", "reference": "b"}]
    _stdin(monkeypatch, b"[1]\n")
    with pytest.raises(InputError, match="<stdin>, line 1: expected a JSON object"):
        read_rows("-", [])


def test_unknown_suffix_and_missing_file(tmp_path):
    with pytest.raises(ValueError, match=r"cannot tell the format of .*pairs\.txt"):
        read_rows(tmp_path / "pairs.txt", [])
    with pytest.raises(FileNotFoundError):
        read_rows(tmp_path / "absent.jsonl", [])


# -- file identity and output paths ---------------------------------------------------------
def test_same_file_by_identity(tmp_path):
    original = tmp_path / "pairs.jsonl"
    original.write_text("{}\n")
    (tmp_path / "sub").mkdir()
    os.link(original, tmp_path / "hard.jsonl")
    os.symlink(original, tmp_path / "soft.jsonl")
    assert same_file(tmp_path / "hard.jsonl", original)
    assert same_file(tmp_path / "soft.jsonl", original)
    assert same_file(tmp_path / "sub" / ".." / "pairs.jsonl", original)
    assert same_file(tmp_path / "new.jsonl", tmp_path / "sub" / ".." / "new.jsonl")
    assert not same_file(tmp_path / "new.jsonl", original)
    assert not same_file("-", original)


def test_output_paths_that_are_folders_or_under_a_file(tmp_path):
    (tmp_path / "file.txt").write_text("x")
    with pytest.raises(ValueError, match=r"^-o .* is a folder; give a file name$"):
        check_output_path(tmp_path, "-o")
    with pytest.raises(ValueError, match=r"out.jsonl: .*file.txt is a file, not a folder$"):
        check_output_path(tmp_path / "file.txt" / "deeper" / "out.jsonl", "-o")
    with pytest.raises(ValueError, match=r"file.txt is a file; give a folder$"):
        check_output_path(tmp_path / "file.txt", folder=True)
    check_output_path(tmp_path / "new" / "deeper" / "out.jsonl")  # folders are created
    check_output_path("-")


# -- atomic writing -------------------------------------------------------------------------
def _leftovers(folder) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def test_atomic_output_appears_only_when_complete(tmp_path):
    path = tmp_path / "out" / "summary.json"
    with atomic_output(path) as handle:
        handle.write("new")
        assert not path.exists() and len(_leftovers(path.parent)) == 1
    assert path.read_text() == "new" and _leftovers(path.parent) == []


def test_a_failed_write_keeps_the_previous_output_and_removes_its_temporary_file(tmp_path):
    path = tmp_path / "scores.jsonl"
    path.write_text("previous\n")
    os.chmod(path, 0o640)
    with pytest.raises(KeyboardInterrupt), JsonlWriter(path) as write:
        write({"row": 0})
        raise KeyboardInterrupt
    assert path.read_text() == "previous\n" and _leftovers(tmp_path) == []
    with JsonlWriter(path) as write:
        write({"row": 0})
        write({"row": 1})
    assert write.written == 2 and path.read_text() == '{"row": 0}\n{"row": 1}\n'
    assert stat.S_IMODE(path.stat().st_mode) == 0o640  # a replaced file keeps its mode


def test_a_full_disk_is_an_error_naming_the_output(tmp_path, monkeypatch):
    """ENOSPC names no file; the error names the user's path, and no temporary is left."""
    import errno

    if Path("/dev/full").exists():  # a device: written into as it comes
        full_device = pytest.raises(OSError, match="No space left on device: '/dev/full'")
        with full_device, atomic_output("/dev/full") as handle:
            handle.write("x" * 100_000)

    def full(_descriptor):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    path = tmp_path / "scores.jsonl"
    full_disk = pytest.raises(OSError, match=re.escape(f"No space left on device: '{path}'"))
    with full_disk, atomic_output(path) as handle:
        handle.write("{}\n")
    assert list(tmp_path.iterdir()) == []


def test_a_killed_writes_temporary_is_named_in_a_warning_and_kept(tmp_path):
    path = tmp_path / "scores.jsonl"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # none left: no warning
        with atomic_output(path) as handle:
            handle.write("1\n")
    (tmp_path / ".scores.jsonl.0badc0de.tmp").write_text("a patient's reply")
    (tmp_path / ".other.jsonl.0badc0de.tmp").write_text("")  # another output's
    leftover = pytest.warns(UserWarning, match=r"1 temporary file\(s\) left by an earlier")
    with leftover as w, atomic_output(path) as handle:
        handle.write("2\n")
    (message,) = [str(m.message) for m in w]
    assert "['.scores.jsonl.0badc0de.tmp']" in message and "patient" not in message
    assert path.read_text() == "2\n" and (tmp_path / ".scores.jsonl.0badc0de.tmp").is_file()


def test_atomic_output_writes_through_a_symbolic_link(tmp_path):
    target = tmp_path / "real.json"
    target.write_text("old")
    os.symlink(target, tmp_path / "link.json")
    with atomic_output(tmp_path / "link.json") as handle:
        handle.write("new")
    assert (tmp_path / "link.json").is_symlink() and target.read_text() == "new"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes need a POSIX system")
def test_a_named_pipe_is_written_into_never_replaced_by_a_file(tmp_path):
    import threading

    from editf1.io import JsonlWriter

    pipe = tmp_path / "scores.jsonl"
    os.mkfifo(pipe)
    received = []
    reader = threading.Thread(target=lambda: received.append(pipe.read_text()))
    reader.start()
    with JsonlWriter(pipe) as write:
        write({"f1": 0.5})
    reader.join(timeout=10)
    assert received == ['{"f1": 0.5}\n']
    assert stat.S_ISFIFO(os.stat(pipe).st_mode)  # still the pipe: no file renamed onto it
    assert os.listdir(tmp_path) == ["scores.jsonl"]
    check_output_path(pipe, "-o")  # a pipe passes for a file


def test_a_block_device_is_refused_as_an_output(tmp_path):
    disks = [p for p in ("/dev/loop0", "/dev/sda", "/dev/vda") if os.path.exists(p)]
    disks = [p for p in disks if stat.S_ISBLK(os.stat(p).st_mode)]
    if not disks:
        pytest.skip("no block device here to point at")
    os.symlink(disks[0], tmp_path / "scores.jsonl")  # a planted link: never written into
    with pytest.raises(ValueError, match="is a block device"):
        check_output_path(tmp_path / "scores.jsonl", "-o")


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux's /proc")
def test_an_output_in_a_folder_where_no_file_can_be_made_is_refused_before_any_work():
    # /proc takes no new files, even from root, for whom permission bits would not tell
    with pytest.raises(ValueError, match=r"--summary-json /proc/x\.json: cannot write in /proc"):
        check_output_path("/proc/x.json", "--summary-json")
    with pytest.raises(ValueError) as error, atomic_output("/proc/x.json"):
        pass
    assert ".tmp" not in str(error.value)  # named by the path given, not a temporary one


def test_standard_output(capsys):
    with JsonlWriter("-") as write:
        write({"a": "é"})
    assert capsys.readouterr().out == '{"a": "é"}\n'


def test_staged_folder_replaces_written_entries_only_on_success(tmp_path):
    folder = tmp_path / "report"
    (folder / "data").mkdir(parents=True)
    (folder / "data" / "old.parquet").write_text("old")
    (folder / "report.md").write_text("old")
    (folder / "keep.txt").write_text("mine")
    with pytest.raises(RuntimeError), staged_folder(folder) as stage:
        (stage / "report.md").write_text("half")
        raise RuntimeError
    assert (folder / "report.md").read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["report"]  # no staging folder left
    with staged_folder(folder) as stage:
        (stage / "data").mkdir()
        (stage / "data" / "new.parquet").write_text("new")
        (stage / "report.md").write_text("new")
    assert sorted(p.name for p in folder.iterdir()) == ["data", "keep.txt", "report.md"]
    assert [p.name for p in (folder / "data").iterdir()] == ["new.parquet"]
    assert (folder / "report.md").read_text() == "new" and _leftovers(folder) == []


def test_staged_folder_never_replaces_an_input(tmp_path):
    folder = tmp_path / "out"
    (folder / "data").mkdir(parents=True)
    source = folder / "data" / "stage1.csv"
    source.write_text("input")
    protect = [folder / "data" / ".." / "data" / "stage1.csv"]
    with (
        pytest.raises(ValueError, match=r"would replace the input .*stage1\.csv"),
        staged_folder(folder, protect=protect) as stage,
    ):
        (stage / "data").mkdir()
    assert source.read_text() == "input"
