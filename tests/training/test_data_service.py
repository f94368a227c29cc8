"""Training input made by TensorFlow's data service: the same batches, each once."""

import json

import numpy as np
import pytest
import tensorflow as tf

from testing import free_ports

from kseq.cli import main
from kseq.errors import KseqError
from kseq.training.data_service import served, start_dispatcher, start_worker


def service(workers):
    """A dispatcher and `workers` workers in this process; the dispatcher's address."""
    dispatcher_port, *ports = free_ports(1 + workers)
    addresses = [f"localhost:{port}" for port in ports]
    servers = [start_dispatcher(dispatcher_port, addresses)]
    servers += [start_worker(f"localhost:{dispatcher_port}", port) for port in ports]
    service.kept = getattr(service, "kept", []) + servers  # alive for the test session
    return f"grpc://localhost:{dispatcher_port}"


def batches(dataset):
    return [tuple(np.asarray(part).tolist() for part in batch) for batch in dataset]


def stream():
    """A stand-in for a run's stream: padded batches of ragged examples."""
    examples = tf.data.Dataset.range(30).map(lambda n: (tf.fill([n % 4 + 1], n), n))
    return examples.padded_batch(4)


def test_one_worker_sends_the_stream_in_order_and_two_send_each_batch_once():
    local = batches(stream())
    assert batches(served(stream(), service(1))) == local
    two = batches(served(stream(), service(2)))
    assert sorted(two) == sorted(local) and len(two) == len(local)


@pytest.mark.parametrize("address", ["localhost:5050", "grpc://localhost", "grpc://a:99999"])
def test_a_bad_address_is_one_line(address):
    with pytest.raises(KseqError, match="grpc://HOST:PORT"):
        served(stream(), address)


@pytest.mark.slow
def test_kseq_train_reads_its_batches_from_the_service(tmp_path, capsys):
    address = service(1)
    output = tmp_path / "run"
    assert main(["train", "numbers_fr_tiny", "--output", str(output), "--epochs", "1",
                 "--data-service", address, "--quiet"]) == 0
    recipe = json.loads((output / "recipe.json").read_text())
    assert recipe["training"]["data_service"] == address
    assert (output / "model.keras").is_file()
    assert main(["train", "numbers_fr_tiny", "--output", str(tmp_path / "both"),
                 "--strategy", "multi-worker", "--data-service", address]) == 2
    assert "not both" in capsys.readouterr().err
