"""Two worker processes split one epoch of a token store by batch position: each example is
trained exactly once across them (what `--strategy multi-worker` relies on: the workers'
streams must be identical, batch for batch, in separate processes)."""

import json
import os
import subprocess
import sys
import textwrap

import pytest
import tensorflow as tf

from kseq.data.corpus.token_store import TokenStore

# A worker: epoch 1 of the store, with each example's id as a feature, bucketed as kseq
# trains (kseq.data.pipeline.bucketing), then every second batch from its index on, as
# AutoShardPolicy.DATA gives a worker.
WORKER = textwrap.dedent("""
    import json, sys
    import tensorflow as tf
    from kseq.data.corpus.token_store import TokenStore
    from kseq.data.pipeline.bucketing import bucket_by_length
    store, index = TokenStore(sys.argv[1]), int(sys.argv[2])
    examples = store.epoch(seed=3, epoch=1, window=64, with_ids=True).map(
        lambda i, e: ({"ids": e[0]["ids"], "example_id": i}, e[1]))
    batches = examples.apply(bucket_by_length([4, 8], batch_size=5)).shard(2, index)
    seen = [int(i) for f, y in batches for i, real in zip(f["example_id"], y) if real >= 0]
    print(json.dumps(seen))
""")


@pytest.mark.slow  # two fresh TensorFlow processes, ~10 s
def test_two_workers_cover_an_epoch_exactly_once(tmp_path):
    examples = tf.data.Dataset.range(301).map(
        lambda n: ({"ids": tf.fill([n % 7 + 1], n)}, n))
    store = TokenStore.build(str(tmp_path / "tokens"), examples.ragged_batch(16), shards=3,
                             chunk=16)
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"}
    workers = [subprocess.Popen([sys.executable, "-c", WORKER, store.folder, str(index)],
                                stdout=subprocess.PIPE, env=env, text=True)
               for index in (0, 1)]
    seen = [json.loads(worker.communicate(timeout=300)[0]) for worker in workers]
    assert all(worker.returncode == 0 for worker in workers)
    assert seen[0] and seen[1] and not set(seen[0]) & set(seen[1])
    assert sorted(seen[0] + seen[1]) == list(range(301))
