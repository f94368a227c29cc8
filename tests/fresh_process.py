"""The environment of the child processes tests start (quiet TensorFlow logs).

Fresh-process checks of exports go through `testing.run_export_test` (one child
per call serving every request of a test).
"""

import os

ENV = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"}
# The environment of a user's shell: TensorFlow's defaults (conftest.py quietens the logs and
# turns oneDNN off for the tests), for the checks of what the command itself prints.
USER_ENV = {key: value for key, value in os.environ.items()
            if key not in ("TF_CPP_MIN_LOG_LEVEL", "TF_ENABLE_ONEDNN_OPTS")}
