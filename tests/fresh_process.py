"""The environment of the child processes tests start (quiet TensorFlow logs).

Fresh-process checks of exports go through `testing.run_export_test` (one child
per call serving every request of a test).
"""

import os

ENV = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"}
