"""Running a CTranslate2 export of a kseq translator, without TensorFlow.

`kseq export MODEL --format ctranslate2` writes the folder
(`kseq.models.translator.ctranslate2_export`, which reads the Keras weights);
`CTranslate2Translator` translates with it, tokenising with
`kseq.text.PlainTokenizer`. Nothing here imports TensorFlow, so `kseq translate
CT2_FOLDER` is a process of CTranslate2's size, not TensorFlow's.
"""

from kseq.ctranslate2.translator import (  # noqa: F401
    CONFIG_FILE,
    CTranslate2Translator,
    is_ctranslate2_export,
    load_ctranslate2_translator,
)
