import numpy as np
import pytest

import kseq

rng = np.random.default_rng(3)
LOGITS = rng.normal(size=(2, 4, 6)).astype("float32")
TARGETS = np.array([[1, 2, 3, 0], [4, 5, 0, 0]], "int32")


def numpy_smoothed_loss(targets, logits, smoothing):
    log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    vocab = logits.shape[-1]
    one_hot = np.eye(vocab)[targets]
    soft = one_hot * (1 - smoothing) + smoothing / vocab
    per_token = -(soft * log_probs).sum(-1)
    mask = targets != 0
    return per_token[mask].mean()


@pytest.mark.parametrize("smoothing", [0.0, 0.1, 0.3])
def test_loss_matches_numpy_reference(smoothing):
    loss = kseq.metrics.MaskedSparseCrossEntropy(label_smoothing=smoothing)
    expected = numpy_smoothed_loss(TARGETS, LOGITS, smoothing)
    assert float(loss(TARGETS, LOGITS)) == pytest.approx(expected, rel=1e-5)


@pytest.mark.parametrize("smoothing", [0.0, 0.2])
def test_loss_gradient_is_softmax_minus_smoothed_target(smoothing):
    import tensorflow as tf

    loss = kseq.metrics.MaskedSparseCrossEntropy(label_smoothing=smoothing)
    logits = tf.constant(LOGITS)
    with tf.GradientTape() as tape:
        tape.watch(logits)
        value = loss(TARGETS, logits)
    gradient = tape.gradient(value, logits).numpy()
    probs = np.exp(LOGITS) / np.exp(LOGITS).sum(-1, keepdims=True)
    soft = np.eye(6)[TARGETS] * (1 - smoothing) + smoothing / 6
    mask = (TARGETS != 0)[..., None]
    expected = (probs - soft) * mask / mask.sum()
    np.testing.assert_allclose(gradient, expected, atol=1e-6)


def test_loss_ignores_padding_logits():
    loss = kseq.metrics.MaskedSparseCrossEntropy(label_smoothing=0.1)
    changed = LOGITS.copy()
    changed[TARGETS == 0] = 50.0
    assert float(loss(TARGETS, changed)) == pytest.approx(float(loss(TARGETS, LOGITS)), rel=1e-6)
    assert float(loss(np.zeros((1, 3), "int32"), LOGITS[:1, :3])) == 0.0


def test_loss_config_and_bad_smoothing():
    loss = kseq.metrics.MaskedSparseCrossEntropy(label_smoothing=0.2)
    assert kseq.metrics.MaskedSparseCrossEntropy.from_config(loss.get_config()).label_smoothing == 0.2
    with pytest.raises(ValueError, match="label_smoothing"):
        kseq.metrics.MaskedSparseCrossEntropy(label_smoothing=1.5)


def test_masked_accuracy_counts_real_tokens_only():
    metric = kseq.metrics.MaskedAccuracy()
    predicted = LOGITS.argmax(-1)
    targets = np.where(TARGETS != 0, predicted, 0)
    targets[0, 0] = (predicted[0, 0] + 1) % 6 or 1
    metric.update_state(targets, LOGITS)
    real = (targets != 0).sum()
    hits = ((predicted == targets) & (targets != 0)).sum()
    assert float(metric.result()) == pytest.approx(hits / real)
