"""One captioner, several caption languages: a language tag forced as the first token."""

import keras
import pytest

import kseq
from captioner_fixtures import EXAMPLES, TINY
from kseq.data.datasets.multilingual_captions import multilingual_splits
from testing import build_optimizer

FRENCH = {"a": "un", "an": "un", "above": "dessus", "below": "dessous", "blue": "bleu",
          "circle": "cercle", "cross": "croix", "diamond": "losange", "green": "vert",
          "left": "gauche", "of": "de", "orange": "orange", "purple": "violet", "red": "rouge",
          "right": "droite", "square": "carré", "triangle": "triangle", "yellow": "jaune"}


def french(caption):
    return " ".join(FRENCH[word] for word in caption.split())


@pytest.fixture(scope="module")
def bilingual():
    splits = multilingual_splits({"en": {"train": EXAMPLES},
                                  "fr": {"train": [(png, french(c)) for png, c in EXAMPLES]}})
    keras.utils.set_random_seed(0)
    model = kseq.zoo.captioner("small_cnn", train_data=splits["train"],
                               recipe={"training": {"peak_learning_rate": 5e-3,
                                                    "warmup_steps": 30, "label_smoothing": 0.0}},
                               **{**TINY, "max_target_length": 14})
    data = model.preprocessor.training_dataset(splits["train"], [14], batch_size=32,
                                               shuffle=False)
    # Both languages come back exactly (greedy) from step 75 on: about 1.45 times that here,
    # for other CPUs' rounding (as the translator overfits).
    build_optimizer(model).fit(data.cache().repeat(110), epochs=1, steps_per_epoch=110,
                               verbose=0)
    return model


@pytest.mark.slow  # a 110-step overfit: ~15 s
def test_the_tag_chooses_the_caption_language(bilingual):
    images = [png for png, _ in EXAMPLES[:6]]
    assert bilingual.languages == ["en", "fr"]
    assert bilingual.caption(images, beam_size=1, language="en") == \
        [c for _, c in EXAMPLES[:6]]
    assert bilingual.caption(images, beam_size=1, language="fr") == \
        [french(c) for _, c in EXAMPLES[:6]]
    best, scores = bilingual.caption(images[:1], language="fr", n_best=2,
                                     return_scores=True)[0]
    assert best[0] == french(EXAMPLES[0][1]) and not best[0].startswith("2fr")
    with pytest.raises(kseq.errors.KseqError, match=r"captions in \['en', 'fr'\] only"):
        bilingual.caption(images, language="de")
    with pytest.raises(kseq.errors.KseqError, match="2-3 letter lower-case code"):
        bilingual.caption(images, language="French")


def test_tags_and_merging():
    from kseq.text.language_tags import language_tag, languages_in

    assert language_tag("fr") == "2fr" and languages_in(["<pad>", "2fr", "2en", "2x", "two"]) \
        == ["en", "fr"]
    merged = multilingual_splits({"en": {"test": [(b"i", "a cat", "animals")]},
                                  "de": {"test": [(b"i", "eine Katze", "animals")]}})
    assert merged == {"test": [(b"i", "2en a cat", "animals"), (b"i", "2de eine Katze",
                                                                 "animals")]}


@pytest.mark.slow  # an export and a child process: ~20 s (the overfit is shared)
def test_the_export_takes_a_language_per_image(bilingual, tmp_path):
    from testing import run_export_test

    path = str(tmp_path / "captioner" / "1")
    bilingual.export(path, beam_size=2)
    images = [png for png, _ in EXAMPLES[:3]]
    answers = run_export_test(path, {
        "mixed": ("caption_in_language", {"image_bytes": images + [b"junk"],
                                          "language": ["fr", "en", "de", "fr"]}),
        "plain": ("serving_default", {"image_bytes": images[:1]}),
        "empty": ("caption_in_language", {"image_bytes": [], "language": []}),
        "one_language_for_two": ("caption_in_language", {"image_bytes": images[:2],
                                                         "language": ["fr"]})},
        loop=True, failing=["one_language_for_two"])
    mixed = answers["mixed"]
    assert [row[0] for row in mixed["text"]] == [french(EXAMPLES[0][1]), EXAMPLES[1][1], "", ""]
    assert mixed["valid"] == [True, True, False, False]  # "de" untrained; junk bytes
    assert [row[0] for row in mixed["score"]][2:] == [0, 0] and mixed["length"][2][0] == 0
    assert mixed["score"][0][0] < 0 and mixed["length"][0][0] > 0
    assert answers["plain"]["valid"] == [True]
    assert answers["empty"]["text"] == []
    error = answers["one_language_for_two"]["error"]
    assert error.startswith("InvalidArgumentError") and "one language per image" in error


@pytest.mark.slow
def test_no_search_emits_a_language_tag_after_the_first_token():
    splits = multilingual_splits({"en": {"train": EXAMPLES},
                                  "fr": {"train": [(png, french(c)) for png, c in EXAMPLES]}})
    keras.utils.set_random_seed(0)
    untrained = kseq.zoo.captioner("small_cnn", train_data=splits["train"],
                                   **{**TINY, "max_target_length": 14})
    images = [png for png, _ in EXAMPLES] * 4
    # Near-uniform sampling from an untrained model: without the rule, tags (2 of the
    # vocabulary's tokens, 13 draws a caption) would turn up mid-caption many times.
    sampled = untrained.caption(images, sampling=True, temperature=50.0, seed=3)
    forced = untrained.caption(images[:16], beam_size=3, language="fr")
    words = [w for caption in sampled for w in caption.split()[1:]] + \
        [w for caption in forced for w in caption.split()]
    assert len(words) > 200 and not {"2en", "2fr"} & set(words)
