"""Moved to `kseq.ctranslate2` (it runs without TensorFlow there); kept for old imports."""

from kseq.ctranslate2.translator import (  # noqa: F401
    CONFIG_FILE,
    FORMAT_VERSION,
    INSTALL_HINT,
    LENGTH_PENALTIES,
    CTranslate2Translator,
    import_ctranslate2,
    is_ctranslate2_export,
    load_ctranslate2_translator,
    read_export_config,
)
