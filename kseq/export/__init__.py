"""SavedModel export for TF Serving."""

from kseq.export.saved_model_export import export_saved_model
