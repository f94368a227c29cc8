"""Training input made by TensorFlow's data service (`tf.data.experimental.service`).

Where making batches, not the model, limits a fast accelerator host, other
machines can run the input pipeline: a dispatcher (`kseq data-service
dispatcher --port P --workers HOST:PORT,...`) hands the run's stream to data
service workers (`kseq data-service worker --dispatcher HOST:P --port PORT`,
one a machine), and `kseq train ... --data-service grpc://HOST:P` trains on
the batches they send. Every worker reads the run's token store (so it must
see the same `$KSEQ_HOME` path, e.g. on a shared file system) and builds the
same epoch stream; worker `i` of `n` keeps batches `i, i + n, ...`
(`ShardingPolicy.DATA` over the dispatcher's fixed worker list), so each batch
of an epoch is trained exactly once. With one worker the order is the local
stream's; with several, batches arrive in the order the workers make them, so
a resumed run trains the same remaining batches, not in the same order.

Example:
>>> check_address("grpc://localhost:5050")
'grpc://localhost:5050'
"""

import re

from kseq.errors import KseqError

ADDRESS = re.compile(r"^grpc://[^\s:/]+:\d{1,5}$")


def check_address(address):
    """`grpc://HOST:PORT`, or one line saying what is expected."""
    if not isinstance(address, str) or not ADDRESS.match(address) or \
            not 0 < int(address.rsplit(":", 1)[1]) < 65536:
        raise KseqError(f"A data service address is grpc://HOST:PORT (the dispatcher's, "
                        f"e.g. grpc://localhost:5050). Received: {address!r}")
    return address


def served(stream, address):
    """`stream` made by the data service at `address`: each of its fixed workers makes
    every n-th batch of the same stream (`ShardingPolicy.DATA`)."""
    import tensorflow as tf

    service = tf.data.experimental.service
    return stream.apply(service.distribute(processing_mode=service.ShardingPolicy.DATA,
                                           service=check_address(address)))


def start_dispatcher(port, workers):
    """A dispatcher on `port` for the fixed list of worker addresses `workers`
    (`HOST:PORT` each; static sharding needs the list)."""
    import tensorflow as tf

    service = tf.data.experimental.service
    for worker in workers:
        if not re.match(r"^[^\s:/]+:\d{1,5}$", worker):
            raise KseqError(f"A worker address is HOST:PORT, as the worker is started with "
                            f"--port. Received: {worker!r}")
    return service.DispatchServer(service.DispatcherConfig(
        port=port, worker_addresses=list(workers), protocol="grpc"))


def start_worker(dispatcher, port, host="localhost"):
    """A data service worker on `port` registered with `dispatcher` (`HOST:PORT` or
    `grpc://HOST:PORT`); `host:port` must be in the dispatcher's worker list."""
    import tensorflow as tf

    service = tf.data.experimental.service
    dispatcher = dispatcher[len("grpc://"):] if dispatcher.startswith("grpc://") else dispatcher
    return service.WorkerServer(service.WorkerConfig(
        dispatcher_address=dispatcher, worker_address=f"{host}:{port}", port=port,
        protocol="grpc"))
