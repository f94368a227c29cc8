"""Presets that ship trained weights: loaded by name everywhere, checked, and installable."""

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import kseq
from kseq.presets import catalog
from kseq.errors import KseqError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))  # the release-time writers are not installed
import preset_weights  # noqa: E402
WITH_WEIGHTS = [name for name in catalog.presets() if catalog.has_weights(name)]
# imagenet_lite0_classifier has no test split here (no labelled photos offline): no slice.
WITH_SLICES = [name for name in WITH_WEIGHTS
               if "slice_200" in catalog.preset_recipe(name)["weights"]]
# The wheel's copy of each family's smallest preset is loaded and run, and reproduces its
# card's figure there; every other preset's file is checked against its catalog digest there.
# The other presets' figures are `test_each_shipped_preset_reproduces_its_cards_slice_figure`'s,
# from the same files: loading a preset twice (here and in the wheel) costs a load and a trace.
RUN_FROM_THE_WHEEL = {"translator": "numbers_fr_transformer", "captioner": "shapes_captioner",
                      "classifier": "sms_spam_classifier", "tagger": "turkish_pos_tagger"}
SLICES_HERE = [name for name in WITH_SLICES if name not in RUN_FROM_THE_WHEEL.values()]

# Run here and in the wheel's process (its source, exec'd in both): a card's slice figures.
CARD_FIGURES = '''
def card_figures(model, pairs, card):
    """The figures `card` (a catalog `slice_200` entry) records, from `model` on `pairs`:
    a classifier's or tagger's scores (tools/classifier_card.py), a language model's
    perplexity (tools/language_model_card.py), else greedy BLEU and chrF."""
    if "perplexity" in card:  # category<TAB>text lines
        return {"perplexity": float(model.perplexity(pairs).perplexity)}
    if "greedy_bleu" not in card:
        result = model.evaluate_pairs(pairs)
        return {key: float(result[key]) for key in ("accuracy", "token_accuracy", "macro_f1")
                if key in card}
    result = model.evaluate_bleu(pairs, beam_size=1, print_signature=False)
    return {"greedy_bleu": float(result["bleu"]), "greedy_chrf": float(result["chrf"])}
'''
_source = {}
exec(CARD_FIGURES, _source)
card_figures = _source["card_figures"]


def assert_card_figures(name, figures):
    """`figures` (`card_figures`) match preset `name`'s card: BLEU and chrF within 0.5,
    a classifier's or tagger's two scores within 0.005, a perplexity within 0.5%."""
    card = catalog.preset_recipe(name)["weights"]["slice_200"]
    if "perplexity" in card:  # within 0.5%
        assert abs(figures["perplexity"] - card["perplexity"]) <= 0.005 * card["perplexity"]
        return
    if "greedy_bleu" in card:
        assert abs(figures["greedy_bleu"] - card["greedy_bleu"]) <= 0.5, (name, figures)
        assert abs(figures["greedy_chrf"] - card["greedy_chrf"]) <= 0.5, (name, figures)
        return
    assert len(figures) == 2, (name, figures)
    for key, value in figures.items():
        assert abs(value - card[key]) <= 0.005, (name, key, value, card[key])


@pytest.fixture(scope="module")
def numbers_model():
    """The shipped numbers translator by name (`kseq.zoo`), loaded once for the tests that
    only read it: each load costs seconds, and each model's first search a trace."""
    return kseq.zoo.translator("numbers_fr_transformer")


@pytest.mark.slow
def test_a_preset_name_loads_its_trained_model_everywhere(numbers_model):
    model = numbers_model
    assert model.translate(["seven hundred and seventy-seven", "forty-two"]) == [
        "sept cent soixante-dix-sept", "quarante-deux"]
    # `from_preset` loads the same trained model: its weights are those that translate
    # above (compared, not translated again: a second model's search is a second trace).
    same = kseq.models.Translator.from_preset("numbers_fr_transformer")
    assert type(same) is type(model)
    assert len(same.weights) == len(model.weights)
    for a, b in zip(same.weights, model.weights):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert model.recipe["task"] == "translator" and "weights" not in model.recipe
    with pytest.raises(KseqError, match="is a translator preset, not a captioner"):
        kseq.models.Captioner.from_preset("numbers_fr_transformer")


@pytest.mark.slow
def test_load_weights_false_builds_the_same_architecture_afresh(numbers_model):
    trained = numbers_model
    fresh = kseq.models.Translator.from_preset("numbers_fr_transformer", load_weights=False)
    assert fresh.count_params() == trained.count_params()
    assert fresh.preprocessor.source_tokenizer.vocabulary == \
        trained.preprocessor.source_tokenizer.vocabulary
    assert not np.allclose(fresh.weights[0].numpy(), trained.weights[0].numpy())


def test_a_preset_without_weights_says_how_to_get_them():
    with pytest.raises(KseqError, match="ships no trained weights: train it with `kseq train "
                                        "numbers_fr_tiny"):
        kseq.zoo.translator("numbers_fr_tiny")
    with pytest.raises(KseqError, match=r"kseq.zoo.classifier\('sentiment_classifier_tiny', "
                                        "load_weights=False\\)"):
        kseq.models.SequenceClassifier.from_preset("sentiment_classifier_tiny",
                                                   load_weights=False)
    with pytest.raises(KseqError, match="pass load_weights=False. Received: train_data"):
        kseq.zoo.translator("numbers_fr_transformer", train_data=[("one", "un")])


def test_old_names_are_aliases():
    assert kseq.zoo.load_recipe("libreoffice_fr_attention") == \
        kseq.zoo.load_recipe("libreoffice_en_fr_attention")
    assert "libreoffice_fr_attention" not in kseq.zoo.presets()


def test_a_corrupt_weights_file_is_refused_naming_it_and_both_hashes(tmp_path, monkeypatch):
    for name in ("numbers_fr_transformer.json", "numbers_fr_transformer.keras"):
        shutil.copyfile(os.path.join(catalog.presets_folder(), name), tmp_path / name)
    data = bytearray((tmp_path / "numbers_fr_transformer.keras").read_bytes())
    data[len(data) // 2] ^= 0xFF  # one flipped byte
    (tmp_path / "numbers_fr_transformer.keras").write_bytes(bytes(data))
    monkeypatch.setattr(catalog, "presets_folder", lambda: tmp_path)
    expected = json.loads((tmp_path / "numbers_fr_transformer.json").read_text())["weights"]
    with pytest.raises(KseqError) as caught:
        kseq.zoo.translator("numbers_fr_transformer")
    message = str(caught.value)
    assert "numbers_fr_transformer.keras" in message and expected["sha256"] in message
    assert catalog.file_sha256(tmp_path / "numbers_fr_transformer.keras") in message
    (tmp_path / "numbers_fr_transformer.keras").unlink()
    with pytest.raises(KseqError, match="missing from this installation"):
        kseq.zoo.translator("numbers_fr_transformer")


def test_every_catalog_entry_matches_its_file():
    for name in WITH_WEIGHTS:
        entry = catalog.preset_recipe(name)["weights"]
        path = os.path.join(catalog.presets_folder(), entry["file"])
        assert os.path.getsize(path) == entry["bytes"]
        assert catalog.file_sha256(path) == entry["sha256"]
    total = sum(catalog.preset_recipe(n)["weights"]["bytes"] for n in WITH_WEIGHTS)
    assert total <= 75_000_000  # issue 32: all shipped weights together


WHEEL_CHECK = """
import json, os, runpy, sys, sysconfig
import numpy as np
import kseq
assert "kseq.training" in sys.modules and callable(kseq.training.train)  # issue 49
from kseq.presets import catalog
here = os.path.realpath(sysconfig.get_paths()["purelib"])
assert os.path.realpath(kseq.__file__).startswith(here), kseq.__file__  # the wheel's copy
run, every = set(json.loads(sys.argv[1])), sys.argv[3:]
exec(sys.argv[2])  # card_figures
out = {}
for name in every:
    entry = catalog.preset_recipe(name)["weights"]
    path = os.path.join(catalog.presets_folder(), entry["file"])
    shipped = os.path.realpath(path).startswith(here) and catalog.file_sha256(path) == entry["sha256"]
    slices = len(catalog.slice_pairs(name)) if "slice_200" in entry else None
    out[name] = {"shipped": shipped, "slices": slices}
    if name not in run:
        continue
    model = catalog.load_preset_model(name)
    out[name]["figures"] = card_figures(model, catalog.slice_pairs(name), entry["slice_200"])
    # Greedy, as the figures: the search traced for them serves these answers too.
    if hasattr(model, "translate"):
        answer = model.translate(["forty-two"], beam_size=1)
    elif hasattr(model, "caption"):  # a white image: any caption, as a string
        answer = [type(c).__name__
                  for c in model.caption([np.full((8, 8, 3), 255, "uint8")], beam_size=1)]
    elif hasattr(model, "predict_labels"):  # a label for the first slice item, and the names
        answer = [model.predict_labels([catalog.slice_pairs(name)[0][0]])[0][0],
                  list(model.label_names)]
    else:  # a tagger: the first slice sentence's tags, and the names
        answer = [model.tag([catalog.slice_pairs(name)[0][0]])[0][1], list(model.tag_names)]
    out[name]["answer"] = answer
print("presets:", json.dumps(out), flush=True)
# The wheel's `kseq` command, its script run here as `venv/bin/kseq` would run it (a second
# process would import TensorFlow again), then an exit that skips TensorFlow's teardown.
script = os.path.join(os.path.dirname(sys.executable), "kseq")
sys.argv = [script, "translate", "numbers_fr_transformer", "nine"]
try:
    runpy.run_path(script, run_name="__main__")
    code = 0
except SystemExit as done:
    code = done.code if isinstance(done.code, int) else 1
sys.stdout.flush()
sys.stderr.flush()
os._exit(code)
"""


@pytest.mark.slow  # builds and installs the wheel (no TensorFlow download), runs 4 presets
def test_a_wheel_install_loads_every_preset_by_name(tmp_path):
    source = tmp_path / "source"
    source.mkdir()
    for name in ("setup.cfg", "pyproject.toml", "README.md"):
        shutil.copyfile(os.path.join(ROOT, name), source / name)
    shutil.copytree(os.path.join(ROOT, "kseq"), source / "kseq",
                    ignore=shutil.ignore_patterns("__pycache__"))
    run = lambda *command, **kw: subprocess.run(command, capture_output=True, text=True,
                                                timeout=600, **kw)
    built = run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                "-w", str(tmp_path / "dist"), str(source))
    assert built.returncode == 0, built.stderr[-2000:]
    venv = tmp_path / "venv"
    assert run(sys.executable, "-m", "venv", "--system-site-packages", "--without-pip",
               str(venv)).returncode == 0
    python = str(venv / "bin" / "python")
    site = run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])")
    # The project's venv holds TensorFlow: put it on the path (its .pth files, among them
    # kseq's editable finder, are not read), then install the wheel without dependencies.
    outer = [p for p in sys.path if p.endswith("site-packages")][0]
    with open(os.path.join(site.stdout.strip(), "outer_venv.pth"), "w") as handle:
        handle.write(outer + "\n")
    wheel = next((tmp_path / "dist").glob("kseq-*.whl"))
    installed = run(python, "-m", "pip", "install", "--no-deps", "--no-index", str(wheel))
    if installed.returncode != 0:  # `--without-pip`: use the outer pip on the new target
        installed = run(sys.executable, "-m", "pip", "--python", python, "install",
                        "--no-deps", "--no-index", str(wheel))
    assert installed.returncode == 0, installed.stderr[-2000:]
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "PYTHONPATH": ""}
    done = run(python, "-c", WHEEL_CHECK, json.dumps(list(RUN_FROM_THE_WHEEL.values())),
               CARD_FIGURES, *WITH_WEIGHTS, cwd=str(tmp_path), env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    (line,) = [line for line in done.stdout.splitlines() if line.startswith("presets: ")]
    answers = json.loads(line[len("presets: "):])
    assert all(answers[name]["shipped"] for name in WITH_WEIGHTS), answers
    assert all(answers[name]["slices"] == 200 for name in WITH_SLICES)  # package data
    tasks = {name: catalog.preset_recipe(name)["task"] for name in WITH_WEIGHTS}
    # every family but the language model's (its file checked by digest there, its card's
    # figure by the slice test here: one more model load in the wheel's process is ~10 s)
    assert set(RUN_FROM_THE_WHEEL) | {"language_model"} == set(tasks.values())
    assert all(tasks[name] == task for task, name in RUN_FROM_THE_WHEEL.items())
    # Their cards' figures, reproduced by the wheel's copies (the slice test has the rest).
    assert set(RUN_FROM_THE_WHEEL.values()) <= set(WITH_SLICES)
    for name in RUN_FROM_THE_WHEEL.values():
        assert_card_figures(name, answers[name]["figures"])
    assert answers["numbers_fr_transformer"]["answer"] == ["quarante-deux"]
    assert answers["shapes_captioner"]["answer"] == ["str"]
    label, names = answers["sms_spam_classifier"]["answer"]
    assert label in names and len(names) == 2, (label, names)
    tags, names = answers["turkish_pos_tagger"]["answer"]
    assert tags and set(tags) <= set(names), (tags, names)
    # What the `kseq` command printed, after the presets' line (exit code 0: above).
    assert done.stdout.split(line, 1)[1].strip() == "neuf", done.stdout[-2000:]


@pytest.mark.slow
def test_float16_weights_halve_the_file_and_load_back_as_float32(tmp_path, numbers_model):
    import keras

    model = numbers_model
    path = str(tmp_path / "half.keras")
    preset_weights.save_float16_keras(model, path)
    assert os.path.getsize(path) < 0.6 * os.path.getsize(
        os.path.join(catalog.presets_folder(), "numbers_fr_transformer.keras"))
    half = keras.saving.load_model(path)
    assert all(w.dtype == "float32" for w in half.weights)
    for a, b in zip(half.weights, model.weights):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-3, atol=1e-4)
    assert half.translate(["seven hundred and seventy-seven"]) == ["sept cent soixante-dix-sept"]


@pytest.mark.slow
def test_write_preset_weights_records_the_file_in_the_catalog(tmp_path, numbers_model):
    shutil.copyfile(os.path.join(catalog.presets_folder(), "numbers_fr_tiny.json"),
                    tmp_path / "numbers_fr_tiny.json")
    model = numbers_model
    entry = preset_weights.write_preset_weights(model, "numbers_fr_tiny", folder=tmp_path)
    recipe = json.loads((tmp_path / "numbers_fr_tiny.json").read_text())
    assert recipe["weights"] == entry and entry["dtype"] == "float16"
    assert entry["sha256"] == catalog.file_sha256(tmp_path / "numbers_fr_tiny.keras")


@pytest.mark.slow
@pytest.mark.parametrize("name", SLICES_HERE)  # the wheel test reproduces the others'
def test_each_shipped_preset_reproduces_its_cards_slice_figure(name):
    entry = catalog.preset_recipe(name)["weights"]["slice_200"]
    pairs = catalog.slice_pairs(name)
    assert len(pairs) == 200
    assert_card_figures(name, card_figures(catalog.load_preset_model(name), pairs, entry))


@pytest.mark.slow  # builds ImageNet Lite0 four times: ~15 s
def test_a_frozen_imagenet_backbone_is_left_out_of_the_shipped_file_and_rebuilt(tmp_path,
                                                                               monkeypatch):
    from captioner_fixtures import EXAMPLES, TINY, images
    from testing import functions_run_eagerly

    options = {k: v for k, v in TINY.items() if k != "filters"}
    model = kseq.zoo.captioner("efficientnet_lite0", train_data=EXAMPLES,
                               trainable_backbone=False, **options)
    (tmp_path / "tiny_captioner.json").write_text(json.dumps({"task": "captioner"}))
    entry = preset_weights.write_preset_weights(model, "tiny_captioner", folder=tmp_path)
    backbone = model.encoder.backbone
    group = entry["rebuilt"]["layers/efficient_net_lite0"]
    assert {key: group[key] for key in ("source", "arrays")} == {
        "source": "efficientnet_lite0/imagenet", "arrays": len(backbone.weights)}
    assert len(group["sha256"]) == 64  # the values' digest, checked on loading
    assert entry["bytes"] < 1_000_000  # the headless backbone alone is 6.8 MB in float16
    monkeypatch.setattr(catalog, "presets_folder", lambda: tmp_path)
    loaded = catalog.load_preset_model("tiny_captioner")
    for ours, theirs in zip(backbone.weights, loaded.encoder.backbone.weights):
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())  # float32, rebuilt
    # Untraced: the point is the rebuilt weights' captions, not the search's graph (traced by
    # the captioner tests), and two eager searches here cost less than their two traces.
    with functions_run_eagerly():
        assert (loaded.caption(images()[:4], beam_size=1)
                == model.caption(images()[:4], beam_size=1))
    # A catalog whose array count does not match the rebuilt group is refused by name.
    recipe = json.loads((tmp_path / "tiny_captioner.json").read_text())
    recipe["weights"]["rebuilt"]["layers/efficient_net_lite0"]["arrays"] += 1
    (tmp_path / "tiny_captioner.json").write_text(json.dumps(recipe))
    with pytest.raises(KseqError, match="tiny_captioner.keras wrote .* the catalog expects"):
        catalog.load_preset_model("tiny_captioner")
    # A backbone that differs from ImageNet's in one value is shipped whole.
    backbone.weights[0].assign(backbone.weights[0] + 1.0)
    entry = preset_weights.write_preset_weights(model, "tiny_captioner", folder=tmp_path)
    assert "rebuilt" not in entry and entry["bytes"] > 6_000_000
