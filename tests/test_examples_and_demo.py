import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.slow
def test_translate_numbers_example_runs_tiny():
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    try:
        import translate_numbers
    finally:
        sys.path.pop(0)
    model, result = translate_numbers.main(tiny=True)
    assert set(result) >= {"bleu", "chrf", "bleu_signature"}
    assert len(result["hypotheses"]) == 40


@pytest.mark.slow
def test_demo_smoke(tmp_path):
    env = {**os.environ, "KSEQ_DEMO_FAST": "1", "KSEQ_DEMO_OUTPUT": str(tmp_path / "demo"),
           "TF_CPP_MIN_LOG_LEVEL": "2"}
    done = subprocess.run([sys.executable, "-m", "kseq.demo"], env=env, capture_output=True,
                          text=True, timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    out = done.stdout
    assert "greedy  on 40 unseen numbers: exact match" in out
    assert "beam 4  on 40 unseen numbers" in out
    assert "seven hundred and seventy-seven ->" in out
    assert (tmp_path / "demo" / "model.keras").exists()
