"""`preprocessor.training_dataset("corpus/*.tsv.gz", ...)`: training batches from files of any
size for plain `model.fit`, prepared and tokenised once, like `kseq train`'s data.

Every row of the files trains (nothing is held out: give validation data to `fit`
yourself). The prepared rows and the tokenised store live in
`$KSEQ_HOME/corpora/<key>`, keyed by the files' SHA-256 and the columns (and the
store by the preprocessor's config): a second call, in any process, reads them.
Each pass over the dataset (each Keras epoch) reshuffles: chunks in a window of
64, then examples in a window of `shuffle_window`.

Example:
>>> import gzip, os, tempfile, kseq
>>> folder = tempfile.mkdtemp()
>>> os.environ["KSEQ_HOME"] = os.path.join(folder, "home")
>>> with gzip.open(os.path.join(folder, "pairs.tsv.gz"), "wt") as handle:
...     _ = handle.write("one\\tun\\ntwo\\tdeux\\nthree\\ttrois\\n")
>>> tok = kseq.text.WordTokenizer.build_vocabulary(["one two three un deux trois"])
>>> pre = kseq.models.TranslatorPreprocessor(tok, tok, 8, 8)
>>> batches = pre.training_dataset(os.path.join(folder, "*.tsv.gz"), [8], batch_size=2)
>>> [tuple(labels.shape) for _, labels in batches]
[(2, 8), (2, 8)]
"""

import hashlib
import json
import os

import tensorflow as tf

from kseq.data.corpus.corpus_files import corpus_files, fingerprint
from kseq.data.corpus.corpus_preparation import CorpusRow, is_prepared, prepare_corpus
from kseq.data.corpus.prepared_corpus import PreparedCorpus
from kseq.data.corpus.token_store import CHUNK, CHUNK_WINDOW, MIXED_CHUNKS, WINDOW, TokenStore
from kseq.data.pipeline.bucketing import (bucket_by_length, count_bucketed_batches,
                                          count_bucketed_chunks, example_length,
                                          filter_by_length)
from kseq.data.pipeline.parallel_text import iter_table_rows
from kseq.data.sources.kseq_home import kseq_home


def file_training_dataset(preprocessor, spec, boundaries, batch_size=None, token_budget=None,
                          shuffle=True, seed=0, repeat=False, columns=None,
                          shuffle_window=WINDOW):
    """Bucketed, padded, prefetched batches of every row of the files `spec` names (a
    file, a glob, a folder or a list), with their number of batches when not `repeat`."""
    files = corpus_files(spec)
    images = getattr(preprocessor, "input_kind", "text") == "images"
    key = _key({"sha256": fingerprint(files), "columns": columns, "all": "train",
                "folders": sorted({os.path.dirname(p) for p in files}) if images else None})
    folder = os.path.join(kseq_home(), "corpora", key)
    if not is_prepared(folder):
        prepare_corpus(_rows(files, columns, images), folder, inputs="paths" if images else "text",
                       sample_size=0)
    corpus = PreparedCorpus(folder)
    store = _token_store(preprocessor, corpus)
    length = preprocessor.example_length
    examples = _examples(store, shuffle, seed, shuffle_window)
    dataset = examples.apply(filter_by_length(max(boundaries), length))
    batches = None if repeat else _count(store, preprocessor, boundaries, batch_size,
                                         token_budget)
    if repeat:
        dataset = dataset.repeat()
    dataset = dataset.apply(bucket_by_length(boundaries, batch_size, token_budget, length,
                                             preprocessor.padded_widths(),
                                             preprocessor.label_padding))
    if batches:
        dataset = dataset.apply(tf.data.experimental.assert_cardinality(batches))
    return dataset.prefetch(tf.data.AUTOTUNE)


def _key(facts):
    return hashlib.sha256(json.dumps(facts, sort_keys=True).encode()).hexdigest()[:32]


def _rows(files, columns, images):
    for path in files:
        folder = os.path.dirname(path)
        for line, source, target in iter_table_rows(path, columns):
            if images and not os.path.isabs(source):
                source = os.path.join(folder, source)
            yield CorpusRow(path, line, source, target, "train")


def _token_store(preprocessor, corpus):
    key = hashlib.sha256(json.dumps({"preprocessor": preprocessor.get_config()},
                                    sort_keys=True, default=str).encode()).hexdigest()[:24]
    folder = os.path.join(corpus.folder, f"tokens-{key}")
    if TokenStore.is_built(folder):
        return TokenStore(folder)
    if corpus.inputs == "paths":  # images read from their files, one example at a time
        chunks = preprocessor.tokenized(corpus.dataset("train")).ragged_batch(CHUNK)
    else:
        chunks = preprocessor.tokenize_batches(corpus.batches("train", CHUNK))
    return TokenStore.build(folder, chunks, expected=corpus.size("train"))


def _examples(store, shuffle, seed, window):
    """The store's examples; shuffled anew on each pass when `shuffle`."""
    if not shuffle:
        return store.examples()
    chunks = store.chunks().shuffle(CHUNK_WINDOW, seed=seed, reshuffle_each_iteration=True)
    examples = chunks.interleave(lambda f, l: tf.data.Dataset.from_tensor_slices((f, l)),
                                 cycle_length=MIXED_CHUNKS, block_length=1).map(_dense)
    return examples.shuffle(window, seed=seed + 1, reshuffle_each_iteration=True)


def _dense(features, labels):
    dense = lambda x: x.to_tensor() if isinstance(x, tf.RaggedTensor) else x
    return tf.nest.map_structure(dense, features), dense(labels)


def _count(store, preprocessor, boundaries, batch_size, token_budget):
    if preprocessor.example_length is example_length:
        return count_bucketed_chunks(store.chunks(), boundaries, batch_size, token_budget)
    return count_bucketed_batches(
        store.examples().apply(filter_by_length(max(boundaries), preprocessor.example_length)),
        boundaries, batch_size, token_budget, preprocessor.example_length)
