"""Synthetic parallel corpora of any size, for the corpus benchmarks.

Each side holds 6-30 words drawn from its own 40,000-word Zipf vocabulary
(made-up words of 2-12 letters), so a vocabulary learner and a tokenizer meet
a realistic spread of frequent and rare words. Written as gzip shards of
`source<TAB>target` lines, `shard-00000.tsv.gz`, ...

Example (a shell):
    python benchmarks/synthetic_corpus.py /tmp/corpus --pairs 300000 --shards 4
"""

import argparse
import gzip
import os

import numpy as np

WORDS = 40_000


def word_list(rng, count=WORDS):
    """`count` distinct made-up lower-case words."""
    letters = np.array(list("abcdefghijklmnopqrstuvwxyzéè"))
    words, seen = [], set()
    while len(words) < count:
        length = int(rng.integers(2, 13))
        word = "".join(rng.choice(letters, length))
        if word not in seen:
            seen.add(word)
            words.append(word)
    return np.array(words, dtype=object)


def zipf_sentences(rng, words, count):
    """`count` sentences of 6-30 words, word ranks Zipf-distributed (s = 1.1)."""
    ranks = rng.zipf(1.1, size=count * 30) - 1
    ranks = ranks[ranks < len(words)]
    lengths = rng.integers(6, 31, size=count)
    out, position = [], 0
    for length in lengths:
        if position + length > len(ranks):
            ranks = np.concatenate([ranks, rng.integers(0, len(words), size=count * 30)])
        out.append(" ".join(words[ranks[position:position + length]]))
        position += length
    return out


def write_corpus(folder, pairs, shards=1, seed=0, chunk=100_000):
    """Writes `pairs` pairs into `shards` gzip TSV files under `folder`; returns their paths."""
    rng = np.random.default_rng(seed)
    source_words, target_words = word_list(rng), word_list(rng)
    os.makedirs(folder, exist_ok=True)
    paths = [os.path.join(folder, f"shard-{i:05d}.tsv.gz") for i in range(shards)]
    per_shard = -(-pairs // shards)
    written = 0
    for path in paths:
        with gzip.open(path, "wt", encoding="utf-8", compresslevel=1) as handle:
            left = min(per_shard, pairs - written)
            while left > 0:
                n = min(chunk, left)
                sources = zipf_sentences(rng, source_words, n)
                targets = zipf_sentences(rng, target_words, n)
                handle.write("".join(f"{s}\t{t}\n" for s, t in zip(sources, targets)))
                left -= n
                written += n
    return paths


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder")
    parser.add_argument("--pairs", type=int, default=300_000)
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    for path in write_corpus(args.folder, args.pairs, args.shards, args.seed):
        print(path)


if __name__ == "__main__":
    main()
