"""The corpus layer: data files of any size, prepared once, read as a stream.

- `corpus_files`: what `--data` names (a file, several, a glob or a folder;
  plain or gzip; TSV or CSV) as a sorted list of files.
- `corpus_preparation.prepare_corpus`: one streamed pass over the rows that
  splits them by a hash of the input (`held_out_split`), keeps a bounded,
  seeded sample for the vocabulary (`reservoir`) and writes record shards,
  in a cache keyed by the files' content.
- `prepared_corpus.PreparedCorpus`: those shards as `tf.data` or bounded lists.
- `token_store.TokenStore`: the training split tokenised once into shards on
  disk, read back in a new, reproducible order every epoch.
"""
