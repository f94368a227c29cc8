"""Dataset builders: each fetches its source into `$KSEQ_HOME` and returns deterministic
`{"train", "valid", "test"}` splits of examples."""
