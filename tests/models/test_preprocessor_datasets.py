"""`Preprocessor.tokenized` traces a preprocessor once; `training_dataset` tokenises once."""

import tensorflow as tf

import kseq
from kseq.data.pipeline.parallel_text import pairs_to_dataset

PAIRS = [(f"{n} plus {n}", f"{2 * n}") for n in range(12)]


class CountingPreprocessor(kseq.models.Preprocessor):
    """Word ids of both sides; counts its traces (Python) and the examples it read (graph)."""

    def __init__(self, cache_examples=True):
        self.tokenizer = kseq.text.WordTokenizer.build_vocabulary(
            [text for pair in PAIRS for text in pair])
        self.cache_examples = cache_examples
        self.traces = 0
        self.examples_read = tf.Variable(0, dtype=tf.int64)

    def __call__(self, sources, targets):
        self.traces += 1
        self.examples_read.assign_add(tf.size(sources, out_type=tf.int64))
        return self.tokenizer.tokenize(sources), self.tokenizer.tokenize(targets)

    def to_dataset(self, data):
        return data if isinstance(data, tf.data.Dataset) else pairs_to_dataset(data)


def _epochs(dataset, epochs):
    """Real rows in each epoch (a batch is filled with rows of padding, all 0)."""
    def real_rows(labels):
        return int(tf.reduce_sum(tf.cast(tf.reduce_any(labels != 0, axis=1), tf.int32)))
    return [sum(real_rows(labels) for _, labels in dataset) for _ in range(epochs)]


def test_tokenized_datasets_share_one_trace_of_the_preprocessor():
    pre = CountingPreprocessor()
    first = [labels.numpy().tolist() for _, labels in pre.tokenized(PAIRS)]
    second = [labels.numpy().tolist() for _, labels in pre.tokenized(PAIRS)]
    assert first == second and len(first) == len(PAIRS)
    assert pre.traces == 1


def test_many_preprocessors_tracing_once_each_is_not_called_retracing():
    # TensorFlow warns of "excessive retracing" when 5 of a function's last 10 calls traced,
    # counting by the function's code: eight models each tracing once (a process that loads
    # several, as a test worker does) must not read as one function retracing.
    from testing import warnings_as_errors

    with warnings_as_errors():
        for _ in range(8):
            pre = CountingPreprocessor()
            pre.traced("__call__")(tf.constant(["1 plus 1"]), tf.constant(["2"]))
            assert pre.traces == 1


def test_training_dataset_tokenises_known_examples_once_for_every_epoch():
    pre = CountingPreprocessor()
    dataset = pre.training_dataset(PAIRS, [8], batch_size=5, seed=1)
    assert _epochs(dataset, 3) == [len(PAIRS)] * 3
    # The batch count's first pass fills the cache; the epochs read it.
    assert int(pre.examples_read.numpy()) == len(PAIRS)


def test_without_cache_every_epoch_tokenises_again():
    pre = CountingPreprocessor(cache_examples=False)
    dataset = pre.training_dataset(PAIRS, [8], batch_size=5, seed=1)
    assert _epochs(dataset, 3) == [len(PAIRS)] * 3
    assert int(pre.examples_read.numpy()) == 4 * len(PAIRS)  # the count, then three epochs
    cached = CountingPreprocessor(cache_examples=False)
    _epochs(cached.training_dataset(PAIRS, [8], batch_size=5, cache=True), 2)
    assert int(cached.examples_read.numpy()) == len(PAIRS)


def test_a_generator_of_unknown_length_is_read_again_each_epoch():
    pre = CountingPreprocessor()
    signature = (tf.TensorSpec([], tf.string), tf.TensorSpec([], tf.string))
    stream = tf.data.Dataset.from_generator(lambda: iter(PAIRS), output_signature=signature)
    dataset = pre.training_dataset(stream, [8], batch_size=5, seed=1)
    assert _epochs(dataset, 2) == [len(PAIRS)] * 2
    assert int(pre.examples_read.numpy()) == 2 * len(PAIRS)


def test_image_preprocessors_decode_every_epoch_by_default():
    tokenizer = kseq.text.WordTokenizer.build_vocabulary(["a red square"])
    captioner = kseq.models.CaptionerPreprocessor(tokenizer, (8, 8), 8)
    assert captioner.cache_examples is False
    assert CountingPreprocessor().cache_examples is True
