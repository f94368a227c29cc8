"""The one export path: a task's `ServingSpec` as a SavedModel for TF Serving, written atomically."""

from kseq.export.inference_copy import inference_model, without_optimizer
from kseq.export.models_config import merge_models_config
from kseq.export.saved_model_export import (
    ServingSpec,
    export_bytes,
    export_saved_model,
    write_warmup_requests,
)
from kseq.export.tf_serving_layout import (
    export_to_serving_layout,
    next_version,
)
