"""A child process without kseq that loads an exported translator and serves strings."""

import os

ENV = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"}

FRESH_PROCESS = r"""
import json, sys
import tensorflow as tf
import tensorflow_text  # registers the tokenizer ops
assert "kseq" not in sys.modules
served = tf.saved_model.load(sys.argv[1])
texts = json.loads(sys.argv[2])
# A lone surrogate cannot be UTF-8: a client sends its surrogatepass bytes (invalid UTF-8).
batch = [t.encode("utf-8", "surrogatepass") for t in texts] + [b"one\xff two"]
out = served.signatures["serving_default"](text=tf.constant(batch))
alone = [served.signatures["serving_default"](text=tf.constant([t]))["text"].numpy()[0, 0]
         for t in batch]
print(json.dumps({
    "text": [[s.decode("utf-8") for s in row] for row in out["text"].numpy()],
    "score": out["score"].numpy().tolist(),
    "truncated": out["truncated"].numpy().tolist(),
    "alone": [s.decode("utf-8") for s in alone],
    "kseq_loaded": "kseq" in sys.modules,
}))
"""
