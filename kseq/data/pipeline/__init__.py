"""The input pipeline: parallel text files, image decoding, bucketing and the epoch order."""

from kseq.data.pipeline.bucketing import (bucket_batch_sizes, bucket_by_length,  # noqa: F401
                                          filter_by_length)
from kseq.data.pipeline.parallel_text import (ParallelTextError, pairs_to_dataset,  # noqa: F401
                                              read_table_rows, read_tsv)
