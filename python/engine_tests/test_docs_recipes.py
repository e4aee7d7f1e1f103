"""The docs' engine recipes (blocks marked `<!-- test: needs pyspark -->`, `needs ray`, `needs apache_beam`;
python/tests/test_docs.py skips them where the engine is not installed) run here, as written, in a folder holding
the OCT2017/train that test_docs.py gives the docs; each must write the dataset a local `libshard.convert` of that
folder writes."""
import os
import subprocess
import sys

import pytest

import libshard
import test_docs as docs  # python/tests: the docs' block finder
from tools_fixtures import assert_same_shards, make_image_folder

ENGINES = ("pyspark", "ray", "apache_beam")
RECIPES = [b for b in docs.blocks() if b.marker and b.marker.startswith("needs ")
           and set(b.marker[6:].split(",")) & set(ENGINES)]


def test_every_engine_has_a_recipe():
    assert sorted({e for b in RECIPES for e in b.marker[6:].split(",")}) == sorted(ENGINES)


@pytest.mark.parametrize("block", RECIPES, ids=[b.id for b in RECIPES])
def test_recipe_runs_and_writes_the_folders_dataset(block, tmp_path):
    make_image_folder(str(tmp_path / "OCT2017"), classes=("CNV", "NORMAL"), per_class=3, splits=("train",), bad=0)
    (tmp_path / "recipe.py").write_text(block.text)
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable)
    r = subprocess.run([sys.executable, "recipe.py"], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, "%s failed:\n%s" % (block.id, (r.stdout + r.stderr)[-4000:])
    out = [d for d in os.listdir(tmp_path) if d.startswith("shards-")]
    assert len(out) == 1, os.listdir(tmp_path)
    libshard.convert(str(tmp_path / "OCT2017" / "train"), tmp_path / "local", prefix="oct", size=64)
    assert_same_shards(str(tmp_path / "local"), str(tmp_path / out[0]))
    assert libshard.verify(str(tmp_path / out[0])).ok
