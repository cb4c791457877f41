"""Running tasks on Dask: an embedded local cluster or an existing one.

:func:`open_client` connects to the scheduler at ``--scheduler ADDRESS``, or starts a
:class:`distributed.LocalCluster` of one single-threaded worker process per core (its HTTP
server on a free port, so that it never competes for Dask's default one; no memory limit: a
synthesis or a Verilator build may need more than a share of the memory).
:func:`stream` submits one task per item and yields each result as it finishes, with the count
of tasks running, for a progress display; :func:`run_sweep` does so for a sweep's points
(:func:`innet.sim.sweep.points.run_point`), and ``innet bench`` for its hardware cases.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from innet.sim.sweep.points import run_point
from innet.sim.sweep.spec import Point

__all__ = ["CONNECT_SECONDS", "Progress", "open_client", "run_sweep", "stream"]

#: How long :func:`open_client` tries to reach a scheduler.
CONNECT_SECONDS = 10
#: More than a scheduler's handshake takes: its first frame is a few hundred bytes.
_HANDSHAKE_BYTES = 1 << 20


@contextlib.contextmanager
def open_client(scheduler: str | None = None, workers: int | None = None) -> Iterator[Any]:
    """A :class:`distributed.Client` on ``scheduler`` (an address such as
    ``tcp://host:8786``), or on a local cluster of ``workers`` processes (default: one per
    core) that is shut down on exit.

    Raises
    ------
    ValueError
        If ``workers`` is not a whole number of at least 1, or the scheduler cannot be reached
        within :data:`CONNECT_SECONDS` (one line naming the address and the reason: refused,
        a server that is not a Dask scheduler, a timeout).
    """
    import logging
    import multiprocessing.forkserver

    import dask
    from distributed import Client, LocalCluster
    from distributed.utils import get_mp_context

    if scheduler is not None:
        try:
            _check_scheduler(scheduler)
            client = Client(scheduler, timeout=f"{CONNECT_SECONDS}s")
        except (OSError, ValueError, TypeError) as error:
            reason = " ".join(str(error).split()) or type(error).__name__
            raise ValueError(f"Cannot reach the Dask scheduler at {scheduler!r}: "
                             f"{reason}") from None
        with client:
            yield client
        return
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int)
                                or workers < 1):
        raise ValueError(f"Workers must be a whole number of at least 1, not {workers!r}")
    count = workers or os.cpu_count() or 1
    # The terminal sends Ctrl-C to the workers too: they ignore it (each would print its
    # KeyboardInterrupt), and this process stops them itself, on its way out. They are forked
    # from a fork server started with SIGINT ignored, which they keep; a Ctrl-C during the
    # cluster's start (a second or two) takes effect when the start is done.
    with dask.config.set({"distributed.worker.multiprocessing-method": "forkserver"}):
        get_mp_context()  # the fork server's preloaded modules, as Dask sets them
        with _sigint_ignored():
            multiprocessing.forkserver.ensure_running()
        with _sigint_deferred() as interrupted:
            cluster = LocalCluster(n_workers=count, threads_per_worker=1, processes=True,
                                   dashboard_address=":0", memory_limit=0,
                                   silence_logs=logging.ERROR)
        with cluster, Client(cluster) as client:
            if interrupted:
                raise KeyboardInterrupt
            yield client


@contextlib.contextmanager
def _sigint_ignored() -> Iterator[None]:
    """SIGINT ignored while the block runs (in the main thread; elsewhere left alone)."""
    try:
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@contextlib.contextmanager
def _sigint_deferred() -> Iterator[list[int]]:
    """A Ctrl-C while the block runs (in the main thread) is noted in the list it yields, not
    raised."""
    interrupted: list[int] = []
    try:
        previous = signal.signal(signal.SIGINT, lambda number, _frame: interrupted.append(number))
    except ValueError:  # not the main thread
        yield interrupted
        return
    try:
        yield interrupted
    finally:
        signal.signal(signal.SIGINT, previous)


def _check_scheduler(scheduler: str) -> None:
    """Raise :class:`OSError` with the reason if ``scheduler``, a TCP address, is not a Dask
    scheduler: its host refuses the connection, or the server there does not open with
    Dask's framing (a scheduler sends its handshake first, led by its 8-byte length). Dask's client
    would try a refused address again until its timeout, and wait for ever on a server that
    stays silent (an HTTP server: the dashboard's port). Other failures are left to Dask."""
    from distributed.comm.addressing import parse_address, parse_host_port

    try:
        protocol, location = parse_address(scheduler)
        host, port = parse_host_port(location)
    except (ValueError, TypeError):
        return
    if protocol != "tcp":
        return
    try:
        sock = socket.create_connection((host, port), timeout=CONNECT_SECONDS)
    except ConnectionRefusedError:
        raise OSError("connection refused") from None
    except OSError:
        return
    head = b""
    # A connection the server resets has no handshake either, as one it closes.
    with sock, contextlib.suppress(ConnectionError):
        try:
            while len(head) < 8 and (chunk := sock.recv(8 - len(head))):
                head += chunk
        except TimeoutError:
            raise OSError(f"the server there sent nothing in {CONNECT_SECONDS} s; a Dask "
                          f"scheduler speaks first") from None
    if len(head) < 8:
        raise OSError("the server there closed the connection without a Dask handshake")
    if int.from_bytes(head, "little") > _HANDSHAKE_BYTES:
        raise OSError("the server there does not speak Dask's protocol")


@dataclass
class Progress:
    """Counts of a run for a progress display: ``done`` (finished, failed included),
    ``failed``, ``running`` (started, not finished; as the scheduler last said) and
    ``total``."""

    total: int
    done: int = 0
    failed: int = 0
    running: int = 0


def _running(client: Any, keys: set[str]) -> int:
    """How many of ``keys`` run on a worker now: those it processes, at most a thread's
    worth each (the rest wait in its queue)."""
    try:
        processing = client.processing()
        threads = client.nthreads()
    except Exception:  # a display figure: never stop the run for it
        return 0
    return sum(min(len(keys.intersection(map(str, tasks))), threads.get(worker, 1))
               for worker, tasks in processing.items())


def stream(client: Any, func: Callable[..., Any], items: Sequence[tuple],
           tick: Callable[[int], None] | None = None,
           poll: float = 1.0) -> Iterator[tuple[int, Any]]:
    """Run ``func(*item)`` for each of ``items`` as a task on ``client`` and yield
    ``(index, result)`` as each finishes; a task that raised yields the exception as its
    result. ``tick(running)`` is called every ``poll`` seconds and after each result.

    Leaving the iteration early (an interrupt) cancels the tasks not yet finished.
    """
    from distributed import wait

    futures = {client.submit(func, *item, pure=False): i for i, item in enumerate(items)}
    pending = set(futures)
    try:
        while pending:
            try:
                done, pending = wait(pending, timeout=poll, return_when="FIRST_COMPLETED")
            except TimeoutError:
                done = set()
            for future in sorted(done, key=futures.__getitem__):
                if future.status == "finished":
                    value = future.result()
                elif future.status == "error":
                    value = future.exception()
                else:  # cancelled: its worker was lost, or another client cancelled it
                    value = RuntimeError(f"The task was {future.status}")
                yield futures[future], value
            if tick is not None:
                tick(_running(client, {f.key for f in pending}))
    finally:
        if pending:
            client.cancel(list(pending))


def run_sweep(points: Sequence[Point], client: Any, cache: str | os.PathLike | None,
              timeout: float = 1800.0,
              on_result: Callable[[dict[str, Any], Progress], None] | None = None,
              on_tick: Callable[[Progress], None] | None = None,
              task: Callable[..., dict[str, Any]] = run_point) -> list[dict[str, Any]]:
    """Run ``points`` on ``client``, one task each, and return their records in the points'
    order.

    Parameters
    ----------
    points : sequence of Point
    client : distributed.Client
    cache : path or None
        The result cache (:mod:`~innet.sim.sweep.cache`), as the workers see it.
    timeout : float
        Seconds each synthesis tool may run.
    on_result : callable, optional
        ``on_result(record, progress)`` as each point finishes (a streamed table).
    on_tick : callable, optional
        ``on_tick(progress)`` every second or so (a progress display).
    task : callable
        ``task(point, cache, timeout) -> record`` (default :func:`run_point`).

    A point whose task raised (a worker that died) is a record with status ``"error"``; the
    sweep goes on. An interrupt (``KeyboardInterrupt`` in a callback) cancels the points not
    finished; the cache keeps those that were.
    """
    cache_text = None if cache is None else os.fspath(cache)
    state = Progress(total=len(points))
    records: list[dict[str, Any] | None] = [None] * len(points)

    def tick(running: int) -> None:
        state.running = running
        if on_tick is not None:
            on_tick(state)

    items = [(p, cache_text, timeout) for p in points]
    for i, value in stream(client, task, items, tick=tick):
        if isinstance(value, BaseException):
            p = points[i]
            value = {"id": p.id, "kind": p.kind, "label": p.label, "params": p.values,
                     "key": None, "status": "error", "result": {}, "cached": False,
                     "reason": f"{type(value).__name__}: {value}", "seconds": None}
        records[i] = value
        state.done += 1
        state.failed += value["status"] != "ok"
        state.running = max(0, min(state.running, state.total - state.done))
        if on_result is not None:
            on_result(value, state)
    return [r for r in records if r is not None]
