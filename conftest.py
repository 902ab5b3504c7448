"""pytest runs every notebook in nbs/ as one test, through nbdev's `test_nb` (the same runner as `nbdev_test`).

Cells flagged with a `tst_flags` flag (settings.ini: `slow`, `gpu`) are skipped unless the flag is named in the
environment variable `LAPA_TEST_FLAGS` (space separated), e.g. `LAPA_TEST_FLAGS=slow pytest`; `CHAPTER:FLAG` runs the
flag's cells in that chapter only, e.g. `LAPA_TEST_FLAGS=70_jobs:slow pytest -n 3` (the real Slurm jobs; `LAPA_CI_SLURM=1 bash .ci/run` runs them in CI).
"""
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).parent


def pytest_configure(config):
    """One BLAS/OpenMP pool per core: under `pytest -n N` each worker gets cpu_count // N threads (set before torch
    loads, inherited by the subprocesses a notebook starts). Oversubscribed pools spin against each other and slow
    the training notebooks several-fold on a small machine."""
    n = os.environ.get("PYTEST_XDIST_WORKER_COUNT") or getattr(config.option, "numprocesses", None) or 1
    workers = int(n) if str(n).isdigit() else (os.cpu_count() or 1)   # -n auto: one worker per core
    os.environ.setdefault("OMP_NUM_THREADS", str(max(1, (os.cpu_count() or 1) // workers)))
    os.environ.setdefault("HF_HUB_OFFLINE", "1")   # nothing may download: a test that tries fails instead of fetching


def pytest_collect_file(parent, file_path):
    if file_path.suffix == ".ipynb" and file_path.parent == ROOT / "nbs" and not file_path.name.startswith("_"):
        return NotebookFile.from_parent(parent, path=file_path)


# The chapters that take longest (about 1-6 minutes each on the 2-core CI machine) start first, and a worker that runs
# out of chapters takes one another has not started (pytest.ini: `--dist worksteal`), so that the workers of
# `pytest -n 3` finish together instead of one waiting on a long chapter queued behind another; the rest keep their order.
SLOW_FIRST = ("70_jobs", "31_trainer", "80_pipeline", "15_lerobot", "60_eval", "20a_laq_train", "22_laq_report")


def pytest_collection_modifyitems(config, items):
    rank = {name: i for i, name in enumerate(SLOW_FIRST)}
    items.sort(key=lambda item: rank.get(item.name, len(rank)))


class NotebookFile(pytest.File):
    def collect(self):
        yield NotebookItem.from_parent(self, name=self.path.stem)


class NotebookItem(pytest.Item):
    def runtest(self):
        from nbdev.config import get_config
        from nbdev.test import test_nb
        words = os.environ.get("LAPA_TEST_FLAGS", "").split()
        force = [w.rpartition(":")[2] for w in words if w.rpartition(":")[0] in ("", self.path.stem)]
        skip = [f for f in get_config().get("tst_flags", "").split() if f not in force]
        ok, secs = test_nb(self.path, skip_flags=skip, force_flags=force, showerr=True, basepath=ROOT)
        self.user_properties.append(("seconds", round(secs, 1)))
        if not ok: raise NotebookFailed(self.path.name)

    def repr_failure(self, excinfo):
        if isinstance(excinfo.value, NotebookFailed):
            return f"notebook {excinfo.value} failed: its traceback is in the captured stderr below"
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, 0, f"notebook {self.path.name}"


class NotebookFailed(Exception):
    pass
