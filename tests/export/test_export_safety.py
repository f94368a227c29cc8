"""Exports that a kill or an error cannot leave half done, models.config merging,
version and name checks, and `serve_ids`'s defined results for bad ids."""

import glob
import os
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np
import pytest
import tensorflow as tf

import kseq.export.tf_serving_layout as layout
from kseq.errors import KseqError
from kseq.export import export_to_serving_layout
from kseq.export.staging import STAGING_PREFIX, remove_stale_staging
from translator_fixtures import tiny_translator

ENV = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"}
OTHER_ENTRY = """# written by hand
model_config_list {
  config {
    name: "other"
    base_path: "/models/other"
    model_platform: "tensorflow"
    model_version_policy { specific { versions: 7 } }
  }
}
"""


def parse_models_config(path):
    from google.protobuf import text_format
    from tensorflow_serving.config import model_server_config_pb2

    with open(path, encoding="utf-8") as handle:
        config = text_format.Parse(handle.read(), model_server_config_pb2.ModelServerConfig())
    return {c.name: c for c in config.model_config_list.config}


def is_complete(version_dir):
    return all(os.path.exists(os.path.join(version_dir, p)) for p in (
        "saved_model.pb", "variables/variables.index", "assets.extra/kseq_export.json"))


def numbered(model_dir):
    return sorted((n for n in os.listdir(model_dir) if n.isdigit()), key=int)


def snapshot(base):
    """Every path under `base` with its bytes (folders as None)."""
    found = {}
    for folder, dirs, files in os.walk(base):
        for name in dirs:
            found[os.path.relpath(os.path.join(folder, name), base)] = None
        for name in files:
            with open(os.path.join(folder, name), "rb") as handle:
                found[os.path.relpath(os.path.join(folder, name), base)] = handle.read()
    return found


@pytest.fixture(scope="module")
def translator():
    return tiny_translator()


@pytest.fixture
def fake_build(monkeypatch):
    """Replaces the (10-20 s) SavedModel build by one that writes the same file layout."""
    calls = []

    def build(model, staging, **options):
        calls.append(options)
        built = os.path.join(staging, "model")
        for path in ("saved_model.pb", "variables/variables.index",
                     "assets.extra/kseq_export.json"):
            os.makedirs(os.path.dirname(os.path.join(built, path)), exist_ok=True)
            with open(os.path.join(built, path), "w") as handle:
                handle.write(f"{len(calls)}\n")
        return built

    monkeypatch.setattr(layout, "build_saved_model", build)
    return calls


# ---------------------------------------------------------------- real kills

CHILD = r"""
import sys
import keras
from kseq.export import export_to_serving_layout
model = keras.saving.load_model(sys.argv[1])
print("ready", flush=True)
print(export_to_serving_layout(model, sys.argv[2], "numbers", beam_size=1), flush=True)
"""


def _run_child(model_path, base, kill_when=None, timeout=240):
    """Runs the export in a child; with `kill_when(pid)`, SIGKILLs it once that is true.

    Returns `(pid, exit code, stdout, stderr)`. Stderr goes to a file, so a
    chatty child never blocks on a full pipe while the parent waits.
    """
    with tempfile.TemporaryFile("w+") as log:
        child = subprocess.Popen([sys.executable, "-c", CHILD, model_path, base], env=ENV,
                                 stdout=subprocess.PIPE, stderr=log, text=True)
        try:
            ready = child.stdout.readline().strip() == "ready"
            deadline = time.monotonic() + timeout
            while ready and kill_when is not None and child.poll() is None:
                if kill_when(child.pid):
                    child.send_signal(signal.SIGKILL)
                    break
                assert time.monotonic() < deadline, "the kill point never came"
                time.sleep(0.005)
            out, _ = child.communicate(timeout=timeout)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
        log.seek(0)
        err = log.read()
    assert ready, err[-3000:]
    return child.pid, child.returncode, out, err


def _staging_of(model_dir, pid, inner=""):
    return glob.glob(os.path.join(model_dir, f"{STAGING_PREFIX}*.{pid}.*", inner))


def _assert_nothing_half_done(base):
    model_dir = os.path.join(base, "numbers")
    for version in numbered(model_dir):
        assert is_complete(os.path.join(model_dir, version)), version
    assert "other" in parse_models_config(os.path.join(base, "models.config"))


@pytest.mark.slow
def test_sigkill_during_export_then_rerun_leaves_a_clean_layout(translator, tmp_path):
    model_path = str(tmp_path / "model.keras")
    translator.save(model_path)
    base = str(tmp_path / "serving")
    model_dir = os.path.join(base, "numbers")
    os.makedirs(base)
    (tmp_path / "serving" / "models.config").write_text(OTHER_ENTRY)

    # Kill 1: while the functions are traced (staging folder made, nothing else yet).
    started = {}

    def tracing(pid):
        if _staging_of(model_dir, pid):
            started.setdefault(pid, time.monotonic())
        return pid in started and time.monotonic() - started[pid] > 0.5

    # Kill 2: inside tf.saved_model.save, once the variables are being written.
    def saving(pid):
        return bool(_staging_of(model_dir, pid, "model/variables"))

    killed = []
    for kill_when in (tracing, saving):
        pid, code, _, err = _run_child(model_path, base, kill_when)
        assert code == -signal.SIGKILL, err[-3000:]
        _assert_nothing_half_done(base)
        assert _staging_of(model_dir, pid)  # its leftover, for the next export to remove
        assert not any(_staging_of(model_dir, before) for before in killed)  # removed
        killed.append(pid)

    # The same export again (here, in this process: a third child would only add a TensorFlow
    # start): it removes the dead children's leftover and exports the next version.
    version_dir = export_to_serving_layout(translator, base, "numbers", beam_size=1)
    versions = numbered(model_dir)
    assert sorted(os.listdir(model_dir)) == sorted(versions)  # no hidden leftovers
    assert version_dir == os.path.join(model_dir, versions[-1])
    for version in versions:
        served = tf.saved_model.load(os.path.join(model_dir, version))
        out = served.signatures["serving_default"](text=tf.constant(["un deux"]))
        assert out["text"].shape == (1, 1)
    config = parse_models_config(os.path.join(base, "models.config"))
    assert set(config) == {"other", "numbers"}
    assert list(config["other"].model_version_policy.specific.versions) == [7]
    assert config["numbers"].base_path == "/models/numbers"


def test_stale_staging_folders_of_dead_processes_only_are_removed(tmp_path):
    from kseq.export.staging import _host

    dead = subprocess.Popen(["true"])
    dead.wait()
    names = {
        "dead": f"{STAGING_PREFIX}{_host()}.{dead.pid}.abc",
        "alive": f"{STAGING_PREFIX}{_host()}.{os.getppid()}.abc",
        "other host": f"{STAGING_PREFIX}elsewhere.{dead.pid}.abc",
        "not ours": ".kseq-partial-abc.keras",
    }
    for name in names.values():
        os.makedirs(tmp_path / name / "model")
    assert remove_stale_staging(str(tmp_path)) == [str(tmp_path / names["dead"])]
    assert sorted(os.listdir(tmp_path)) == sorted(v for k, v in names.items() if k != "dead")


def test_publish_replaces_a_folder_whole_or_refuses(tmp_path):
    from kseq.export.staging import publish, staging_directory

    os.makedirs(tmp_path / "1" / "old_only")
    for replace in (False, True):
        with staging_directory(str(tmp_path)) as staging:
            os.makedirs(os.path.join(staging, "model", "new_only"))
            if replace:
                publish(os.path.join(staging, "model"), str(tmp_path / "1"), replace=True)
            else:
                with pytest.raises(FileExistsError):
                    publish(os.path.join(staging, "model"), str(tmp_path / "1"))
        assert os.listdir(tmp_path / "1") == ["new_only" if replace else "old_only"]
    assert os.listdir(tmp_path) == ["1"]  # no staging folder left


# ------------------------------------------------------------- models.config

@pytest.mark.slow
def test_models_config_keeps_other_models_and_escapes_names(fake_build, translator, tmp_path):
    base = str(tmp_path)
    (tmp_path / "models.config").write_text(OTHER_ENTRY)
    odd = 'say "hi" \\ there'
    assert export_to_serving_layout(translator, base, "numbers", beam_size=2) == \
        os.path.join(base, "numbers", "1")
    assert export_to_serving_layout(translator, base, odd) == os.path.join(base, odd, "1")
    assert export_to_serving_layout(translator, base, "numbers") == \
        os.path.join(base, "numbers", "2")
    assert fake_build[0] == {"beam_size": 2}
    config = parse_models_config(tmp_path / "models.config")
    assert sorted(config) == sorted(["other", "numbers", odd])  # one entry per name
    assert config[odd].base_path == f"/models/{odd}"
    assert config["numbers"].model_platform == "tensorflow"
    text = (tmp_path / "models.config").read_text()
    assert text.startswith(OTHER_ENTRY.rsplit("}", 1)[0])  # the hand-written part verbatim
    assert r'name: "say \"hi\" \\ there"' in text


def test_failed_export_changes_no_file(fake_build, translator, tmp_path, monkeypatch):
    base = str(tmp_path)
    export_to_serving_layout(translator, base, "numbers")
    before = snapshot(base)

    def broken(model, staging, **options):
        os.makedirs(os.path.join(staging, "model", "variables"))
        raise RuntimeError("export failed")

    monkeypatch.setattr(layout, "build_saved_model", broken)
    for name in ("numbers", "new_model"):
        with pytest.raises(RuntimeError, match="export failed"):
            export_to_serving_layout(translator, base, name)
    assert snapshot(base) == before  # models.config, versions, no staging, no new_model/


def test_unreadable_models_config_fails_before_exporting(fake_build, translator, tmp_path):
    (tmp_path / "models.config").write_text("model_config_list { config { name: ")
    with pytest.raises(KseqError, match="models.config"):
        export_to_serving_layout(translator, str(tmp_path), "numbers")
    assert not fake_build and sorted(os.listdir(tmp_path)) == ["models.config"]


# ------------------------------------------------------- versions and names

@pytest.mark.parametrize("version", [0, -1, "0", "-2", "1.5", 2.0, True, "", "x"])
def test_bad_versions_are_one_line_errors(fake_build, translator, tmp_path, version):
    with pytest.raises(KseqError, match="--version") as error:
        export_to_serving_layout(translator, str(tmp_path), "numbers", version=version)
    assert "\n" not in str(error.value) and "Received: --version" in str(error.value)
    assert not fake_build and os.listdir(tmp_path) == []


@pytest.mark.parametrize("name", ["", ".", "..", "a/b", "/abs"])
def test_bad_names_are_one_line_errors(fake_build, translator, tmp_path, name):
    with pytest.raises(KseqError, match="name") as error:
        export_to_serving_layout(translator, str(tmp_path), name)
    assert "\n" not in str(error.value)
    assert not fake_build and os.listdir(tmp_path) == []


def test_explicit_and_next_versions(fake_build, translator, tmp_path, caplog):
    """Every all-digit entry counts as taken, complete or not: TF Serving reads each as a
    version. kseq never deletes or reuses one; a warning names an incomplete one."""
    base, model_dir = str(tmp_path), tmp_path / "numbers"
    assert export_to_serving_layout(translator, base, "numbers", version="3").endswith("3")
    with pytest.raises(KseqError, match="Version 3 already exists.*Received: --version 3"):
        export_to_serving_layout(translator, base, "numbers", version=3)
    os.makedirs(model_dir / "5")  # left by an older kseq: no saved_model.pb
    os.makedirs(model_dir / "notes")
    with pytest.raises(KseqError, match="Version 5 already exists"):
        export_to_serving_layout(translator, base, "numbers", version=5)
    assert export_to_serving_layout(translator, base, "numbers").endswith("6")
    assert "saved_model.pb" in caplog.text and str(model_dir / "5") in caplog.text
    assert export_to_serving_layout(translator, base, "numbers", version=4).endswith("4")
    assert sorted(os.listdir(model_dir)) == ["3", "4", "5", "6", "notes"]
    assert os.listdir(model_dir / "5") == []


# ------------------------------------------------------------------ serve_ids

@pytest.fixture(scope="module")
def serve_ids(translator):
    from kseq.models.translator.serving import TranslatorEndpoints

    settings = translator.search_settings(beam_size=1)
    module = TranslatorEndpoints(translator, settings, xla=False)

    def call(ids, lengths):
        out = module.serve_ids(tf.constant(ids, tf.int32), tf.constant(lengths, tf.int32))
        return {k: v.numpy() for k, v in out.items()}

    return call


@pytest.mark.slow
def test_serve_ids_reads_bad_ids_as_unk_and_honours_lengths(serve_ids, translator):
    v = translator.source_tokenizer.vocabulary_size
    out = serve_ids([[5, 1, 6, 7], [5, v, 6, 7], [5, -3, 6, 7], [5, 2**31 - 1, 6, -1],
                     [5, 1, 6, 0], [5, 1, 6, 9], [5, 6, 7, 8]],
                    [4, 4, 4, 3, 3, 3, -2])
    for row in (1, 2, 3, 4, 5):  # out of range, negative, past the length: as row 0 or 3
        for key in out:  # scores: float noise between rows of one batch
            np.testing.assert_allclose(out[key][row], out[key][0 if row < 3 else 3],
                                       atol=1e-5, err_msg=f"{key} row {row}")
    # Row 3 (length 3) equals a 3-id input with nothing after it.
    short = serve_ids([[5, 1, 6]], [3])
    for key in out:
        np.testing.assert_allclose(out[key][3], short[key][0], atol=1e-5)
    # A negative length counts as 0: no source left, the result of an empty string.
    assert out["score"][6].tolist() == [0.0] and out["length"][6].tolist() == [0]
    assert not out["ids"][6].any()


@pytest.mark.slow
@pytest.mark.parametrize("lengths", [[3], [3, 3, 3, 3], []])
def test_serve_ids_rejects_lengths_of_the_wrong_size(serve_ids, lengths):
    with pytest.raises(tf.errors.InvalidArgumentError, match="`lengths`.*`source_ids`"):
        serve_ids([[5, 6, 7]] * 3, lengths)
