"""SavedModel export for TF Serving."""

from kseq.export.saved_model_export import (
    export_saved_model,
    serving_layout,
    write_warmup_requests,
)
