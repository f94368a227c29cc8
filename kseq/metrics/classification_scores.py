"""Scores of class predictions: accuracy, macro-F1, per-class F1, MCC, the confusion matrix.

Pure Python and numpy, so they are checked against hand-computed values.

Example:
>>> from kseq.metrics.classification_scores import classification_scores
>>> scores = classification_scores([0, 0, 1, 1], [0, 1, 1, 1], ["ham", "spam"])
>>> scores["accuracy"], scores["per_class"]["spam"]["f1"], scores["confusion_matrix"]
(0.75, 0.8, [[1, 1], [0, 2]])
"""

import numpy as np


def _f1(precision, recall):
    return 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)


def matthews_correlation(confusion):
    """Multi-class MCC (Gorodkin 2004) of a `[C, C]` confusion matrix (rows: truth)."""
    confusion = np.asarray(confusion, dtype=float)
    total, correct = confusion.sum(), np.trace(confusion)
    predicted, true = confusion.sum(axis=0), confusion.sum(axis=1)
    numerator = correct * total - predicted @ true
    denominator = np.sqrt((total**2 - predicted @ predicted) * (total**2 - true @ true))
    return 0.0 if denominator == 0 else float(numerator / denominator)


def classification_scores(truth, predicted, label_names):
    """`truth`, `predicted`: class ids; returns a dict of plain Python numbers.

    Keys: `accuracy`, `macro_f1` (the unweighted mean of per-class F1),
    `mcc`, `per_class` (`{name: {"precision", "recall", "f1", "support"}}`),
    `confusion_matrix` (rows: true class, columns: predicted), `examples`.
    """
    classes = len(label_names)
    confusion = np.zeros((classes, classes), dtype=int)
    for t, p in zip(truth, predicted):
        confusion[t, p] += 1
    per_class = {}
    for index, name in enumerate(label_names):
        hits = confusion[index, index]
        precision = hits / confusion[:, index].sum() if confusion[:, index].sum() else 0.0
        recall = hits / confusion[index].sum() if confusion[index].sum() else 0.0
        per_class[name] = {"precision": round(float(precision), 4),
                           "recall": round(float(recall), 4),
                           "f1": round(float(_f1(precision, recall)), 4),
                           "support": int(confusion[index].sum())}
    total = int(confusion.sum())
    return {"accuracy": round(float(np.trace(confusion) / total), 4) if total else 0.0,
            "macro_f1": round(float(np.mean([c["f1"] for c in per_class.values()])), 4),
            "mcc": round(matthews_correlation(confusion), 4), "per_class": per_class,
            "confusion_matrix": confusion.tolist(), "examples": total}


def plot_confusion(confusion, label_names, path):
    """Writes the confusion matrix (rows: true, columns: predicted) as a PNG heatmap."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as error:
        raise ImportError("plotting needs matplotlib: pip install 'kseq[plot]'") from error
    confusion = np.asarray(confusion)
    size = 1.5 + 0.5 * len(label_names)
    figure, axes = plt.subplots(figsize=(size + 1, size))
    image = axes.imshow(confusion, cmap="Blues")
    for (row, column), count in np.ndenumerate(confusion):
        axes.text(column, row, str(count), ha="center", va="center",
                  color="white" if count > confusion.max() / 2 else "black")
    axes.set_xticks(range(len(label_names)), label_names, rotation=45, ha="right")
    axes.set_yticks(range(len(label_names)), label_names)
    axes.set_xlabel("predicted")
    axes.set_ylabel("true")
    figure.colorbar(image)
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return path
