"""libshard.report: the `shard report` page from Python, the same bytes as the program's, inline in notebooks."""
import os
import subprocess

import pytest

import libshard
from tools_fixtures import make_image_folder, shard_program

SHARD = shard_program()


@pytest.fixture
def converted(tmp_path):
    make_image_folder(str(tmp_path / "pets"))
    out = str(tmp_path / "out")
    libshard.convert(str(tmp_path / "pets"), out, size=32)
    return out


def test_report_writes_the_programs_page_and_shows_inline(converted, tmp_path):
    page = libshard.report(converted, seed=3, thumbnails=2)
    assert isinstance(page, libshard.ReportPage)
    assert page.path == os.path.join(converted, "report.html") and os.path.isfile(page)
    html = page._repr_html_()
    assert html.startswith("<!DOCTYPE html>") or html.lower().startswith("<!doctype html>")
    for name in ("cat", "dog", "eel"):
        assert name in html
    if SHARD is not None:
        mine = str(tmp_path / "program.html")
        subprocess.run([SHARD, "report", converted, "-o", mine, "--seed", "3", "--thumbnails", "2", "-q"], check=True)
        with open(mine, "rb") as a, open(page, "rb") as b:
            assert a.read() == b.read()


def test_report_to_another_file_with_verify(converted, tmp_path):
    page = libshard.report(converted, tmp_path / "r.html", verify=True)
    assert page == str(tmp_path / "r.html")
    assert "verified" in page._repr_html_()


def test_report_takes_a_path_that_is_not_utf8(converted, tmp_path):
    folder = os.fsencode(str(tmp_path)) + b"/set-\xff"
    os.rename(converted, folder)
    page = libshard.report(folder)
    assert os.fsencode(page) == folder + b"/report.html" and os.path.isfile(page)
    assert "cat" in page._repr_html_()
    with pytest.raises(ValueError, match=r"set-\\xfe"):
        libshard.report(os.fsencode(str(tmp_path)) + b"/set-\xfe")


def test_report_errors_are_value_errors_with_the_programs_message(tmp_path):
    with pytest.raises(ValueError, match="shard report: "):
        libshard.report(tmp_path / "nothing-here")
    with pytest.raises(ValueError, match="thumbnails"):
        libshard.report(tmp_path, thumbnails=1000)
    with pytest.raises(ValueError, match="decode: needs verify"):
        libshard.report(tmp_path, decode=True)
