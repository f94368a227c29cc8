"""Tiny trained models shared by every test and every pytest-xdist worker of one run.

Each xdist worker has its own session fixtures, so a session fixture alone still
trains once per worker. `SharedModels.get(name, train)` trains `name` once per
run: the first worker to ask holds a file lock while it trains and saves
`name.keras` in the run's shared temporary folder; every worker (that one too)
then loads the file, once, and hands the same object to every test that asks.
Tests treat these models as read-only.
"""

import fcntl
import os

import keras


class SharedModels:
    """Models trained once per test run, saved as `.keras` in `folder`.

    Args:
        folder: a folder every worker of this run sees (and no other run does).
    """

    def __init__(self, folder):
        self.folder = str(folder)
        os.makedirs(self.folder, exist_ok=True)
        self.loaded = {}

    def get(self, name, train):
        """The model `train()` returns, trained at most once per run.

        Args:
            name: a file-name-safe key; one name is one training recipe.
            train: `() -> keras.Model`, called only by the first worker to ask.
        """
        if name not in self.loaded:
            path = os.path.join(self.folder, f"{name}.keras")
            with open(os.path.join(self.folder, f"{name}.lock"), "w") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)  # the other workers wait for the file
                if not os.path.exists(path):
                    partial = os.path.join(self.folder, f"{name}.partial.keras")
                    train().save(partial)
                    os.replace(partial, path)
            self.loaded[name] = keras.saving.load_model(path)
        return self.loaded[name]


def run_folder(tmp_path_factory):
    """The folder shared by this run's workers: the parent of a worker's base temp."""
    base = tmp_path_factory.getbasetemp()
    # Under xdist the base is `pytest-N/popen-gwK`; without it, `pytest-N` itself (its
    # parent, `pytest-of-user`, is shared by every run and would hold stale models).
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    return shared / "shared-models"
