"""`kseq data-service dispatcher|worker`: TensorFlow's data service, one command a server.

A run trains on batches that data service workers make (`kseq train ...
--data-service grpc://HOST:PORT`, `kseq.training.data_service`):

    kseq data-service dispatcher --port 5050 --workers localhost:5051
    kseq data-service worker --dispatcher localhost:5050 --port 5051
    kseq train RECIPE --data 'corpus/*.tsv.gz' --output runs/big \\
        --data-service grpc://localhost:5050

Each server prints where it listens and runs until Ctrl-C (exit 130).
"""

import time

from kseq.errors import KseqError


def add_data_service_command(commands, common, integer):
    """The `data-service` command and its two servers (argument types are the parser's)."""
    service = commands.add_parser(
        "data-service", help="run a tf.data service dispatcher or worker that makes a "
                             "run's batches (kseq train --data-service)", parents=common)
    servers = service.add_subparsers(dest="server", required=True)
    dispatcher = servers.add_parser("dispatcher", help="hand a run's stream to the workers")
    dispatcher.add_argument("--port", type=integer(1), required=True,
                            help="the port to listen on (kseq train --data-service "
                                 "grpc://HOST:PORT)")
    dispatcher.add_argument("--workers", required=True, metavar="HOST:PORT,...",
                            help="every worker's address, in order (worker i of n makes "
                                 "batches i, i+n, ...)")
    dispatcher.set_defaults(run=_dispatcher)
    worker = servers.add_parser("worker", help="make batches for a dispatcher")
    worker.add_argument("--dispatcher", required=True, metavar="HOST:PORT",
                        help="the dispatcher's address")
    worker.add_argument("--port", type=integer(1), required=True,
                        help="the port to listen on (as in the dispatcher's --workers)")
    worker.add_argument("--host", default="localhost",
                        help="this machine's name as the dispatcher's --workers gives it "
                             "(default: localhost)")
    worker.set_defaults(run=_worker)


def _dispatcher(args):
    from kseq.training.data_service import start_dispatcher

    workers = [address.strip() for address in args.workers.split(",") if address.strip()]
    server = _started(lambda: start_dispatcher(args.port, workers), args.port)
    print(f"data service dispatcher at grpc://localhost:{args.port} for {len(workers)} "
          f"worker(s): {', '.join(workers)}", flush=True)
    _serve(server)


def _worker(args):
    from kseq.training.data_service import start_worker

    server = _started(lambda: start_worker(args.dispatcher, args.port, args.host), args.port)
    print(f"data service worker at {args.host}:{args.port} for {args.dispatcher}", flush=True)
    _serve(server)


def _started(start, port):
    try:
        return start()
    except (RuntimeError, ValueError, OSError) as error:  # a taken port, a bad address
        raise KseqError(f"The data service server did not start ({str(error).splitlines()[0]}"
                        f"). Received: --port {port}") from None


def _serve(server):
    """Until Ctrl-C: the server runs in TensorFlow's threads (kept alive by `server`);
    this one only waits."""
    while server is not None:
        time.sleep(3600)
