"""numba in one place: the decorator every kernel uses, and a note to the user when compilation starts.

Every kernel is `@kernel`: `numba.njit(cache=True, nogil=True)`, so each compiles once per machine (numba's on-disk
cache, beside the source in `__pycache__` or under `NUMBA_CACHE_DIR`) and releases the GIL while it runs.
A first run after an install or an upgrade compiles for a while; `announce_compilation` tells the user so the
moment the first kernel misses the cache (numba's `numba:compile` event fires on cache misses only), never on a
warm start.
"""

from __future__ import annotations

import errno
import fcntl
import glob
import os
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numba as nb
from numba import types as nt
from numba.core import event

_OPTIONS = {"cache": True, "nogil": True}

# Types for explicit signatures. Helpers called from other kernels get one: then each compiles exactly once, instead
# of once per combination of argument types its callers happen to pass (numba specialises on int32 vs int64 and on
# every literal constant, `f(x, 0)` and `f(x, True)` included, which multiplied compile time).
I32, I64, F64, U8, U32, BOOL, NONE = nt.int32, nt.int64, nt.float64, nt.uint8, nt.uint32, nt.boolean, nt.none


def arr(dtype: Any, ndim: int = 1, readonly: bool = False) -> nt.Array:
    """A C-contiguous array type (graph arrays are read-only: loaded memory-mapped or frozen in memory)."""
    return nt.Array(dtype, ndim, "C", readonly=readonly)


def tup(*items: Any) -> nt.Tuple:
    """A tuple type (multiple return values)."""
    return nt.Tuple(items)


def kernel(fn: Any = None, *, nrt: bool = True, inner: bool = False, **options: Any) -> Any:
    """`numba.njit(cache=True, nogil=True)`: bare (`@kernel`), with signature(s) (`@kernel(I64(I64))`), or with
    options (`@kernel(inline="never")`).

    `nrt=False` compiles a kernel that allocates nothing without numba's reference counting: a kernel call otherwise
    increments and decrements the count of every array argument with an atomic instruction, which in a helper called
    per settled node or heap operation was a third of a hierarchy query (numba refuses to compile one that allocates).

    A kernel with signature(s) compiles (or loads from the cache) exactly those, and no others, but only when first
    needed: its first call from Python, `entry()`, or the first kernel compiled that calls it. Never at import: a
    kernel that only other kernels call is never loaded once they are cached (their machine code holds it), and a
    command loads only the kernels it runs (preprocess never the search core, a server never the contraction).
    `ready_all()` loads or compiles every such kernel of the modules imported so far.

    `inner=True` marks a kernel that only other kernels call: numba then builds no Python-callable wrapper for it
    (unboxing every argument, boxing the result) nor a C one, a good part of a small kernel's compile (the turn
    stage's helpers: 12.5 -> 11 s cold). Calling it from Python fails.
    """
    if not nrt:
        options["_nrt"] = False
    if inner:
        options.update(no_cpython_wrapper=True, no_cfunc_wrapper=True)
    if callable(fn) and not isinstance(fn, nt.Type) and not hasattr(fn, "return_type"):
        return _SHARED_COMPILES.share(nb.njit(**_OPTIONS)(fn))  # type: ignore[call-overload]
    if fn is not None:
        signatures = list(fn) if isinstance(fn, (list, tuple)) else [fn]
        return lambda f: _deferred(_SHARED_COMPILES.share(nb.njit(**{**_OPTIONS, **options})(f)), signatures)
    return lambda f: _SHARED_COMPILES.share(nb.njit(**{**_OPTIONS, **options})(f))


class _SharedCompiles:
    """One compile per kernel across processes: a first start compiles in two processes at once (`serve` of an
    extract builds the graph while a child compiles the engine's first kernels; `compile_all`'s two jobs), and each
    compiled what the other had not finished writing to the cache, so both spent the time.

    On a cache miss a kernel takes an exclusive lock, a byte of `starroute-compile.lock` in its cache folder (at the
    CRC-32 of its index file's name), loads again if it had to wait (the holder has written it meanwhile) and keeps
    the lock until its compile returns. Callees compile inside their caller's compile, so locks are taken in the
    call graph's order and two processes cannot wait on each other; a lock still held after `WAIT_S` (or a folder
    without write access) compiles without it, as numba alone would. A warm start never takes a lock: every load
    hits the cache first.
    """

    POLL_S = 0.005
    WAIT_S = 120.0

    def __init__(self) -> None:
        self.files: dict[str, int | None] = {}  # cache folder -> descriptor of its lock file (None: cannot lock)
        self.held: set[tuple[int, int]] = set()  # (descriptor, byte) this process holds
        self.local = threading.local()  # .frames: per compile call on this thread, the locks it took

    def share(self, dispatcher: Any) -> Any:
        cache = getattr(dispatcher, "_cache", None)
        cache_file = getattr(cache, "_cache_file", None)
        if cache is None or cache_file is None:
            return dispatcher
        load, compile_ = cache.load_overload, dispatcher.compile
        folder, name = os.path.split(cache_file._index_path)
        byte = zlib.crc32(name.encode())

        def load_overload(sig: Any, target_context: Any) -> Any:
            cres = load(sig, target_context)
            if cres is None and self._lock(folder, byte):
                cres = load(sig, target_context)  # another process held it: compiled and written meanwhile
            return cres

        def compile(sig: Any) -> Any:
            frames = self.local.__dict__.setdefault("frames", [])
            frames.append([])
            _COMPILE_CLOCK.enter()
            try:
                return compile_(sig)
            finally:
                _COMPILE_CLOCK.leave()
                for key in frames.pop():
                    self._unlock(key)

        cache.load_overload = load_overload
        dispatcher.compile = compile
        return dispatcher

    def _fd(self, folder: str) -> int | None:
        if folder not in self.files:
            try:
                self.files[folder] = os.open(os.path.join(folder, "starroute-compile.lock"), os.O_RDWR | os.O_CREAT)
            except OSError:
                self.files[folder] = None
        return self.files[folder]

    def _lock(self, folder: str, byte: int) -> bool:
        """Take the kernel's lock for the current compile call; returns whether another process held it first."""
        frames = getattr(self.local, "frames", None)
        fd = self._fd(folder)
        if not frames or fd is None or (fd, byte) in self.held:
            return False
        waited = False
        deadline = time.monotonic() + self.WAIT_S
        while True:
            try:
                fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, byte, os.SEEK_SET)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES) or time.monotonic() > deadline:
                    return waited  # no locks on this file system, or held too long: compile without
                waited = True  # another process holds it
                time.sleep(self.POLL_S)
        self.held.add((fd, byte))
        frames[-1].append((fd, byte))
        return waited

    def _unlock(self, key: tuple[int, int]) -> None:
        self.held.discard(key)
        try:
            fcntl.lockf(key[0], fcntl.LOCK_UN, 1, key[1], os.SEEK_SET)
        except OSError:
            pass


_SHARED_COMPILES = _SharedCompiles()


class _CompileClock:
    """How long this process has spent getting kernels ready: the seconds during which at least one of its threads
    was inside a kernel's compile call (compiling it, loading it from the cache, or waiting for numba's compiler lock
    or another process's compile of it). Intervals of several threads at once count once. Each thread's own such
    seconds are kept too (`thread_seconds`)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._active = 0
        self._since = 0.0
        self._total = 0.0
        self._thread = threading.local()  # .depth (nested compile calls), .since, .total: this thread's own

    def enter(self) -> None:
        mine = self._thread
        depth = getattr(mine, "depth", 0)
        if depth == 0:
            mine.since = time.monotonic()
        mine.depth = depth + 1
        with self._lock:
            if self._active == 0:
                self._since = time.monotonic()
            self._active += 1

    def leave(self) -> None:
        mine = self._thread
        mine.depth -= 1
        if mine.depth == 0:
            mine.total = getattr(mine, "total", 0.0) + time.monotonic() - mine.since
        with self._lock:
            self._active -= 1
            if self._active == 0:
                self._total += time.monotonic() - self._since

    def seconds(self) -> float:
        with self._lock:
            return self._total + (time.monotonic() - self._since if self._active else 0.0)

    def thread_seconds(self) -> float:
        mine = self._thread
        ongoing = time.monotonic() - mine.since if getattr(mine, "depth", 0) else 0.0
        return float(getattr(mine, "total", 0.0)) + ongoing


_COMPILE_CLOCK = _CompileClock()


def compile_seconds() -> float:
    """Seconds (`time.monotonic`) this process has spent so far with a kernel being compiled or loaded by one of its
    threads, or waited for: what a request time limit leaves out (a first start compiles while it serves)."""
    return _COMPILE_CLOCK.seconds()


def thread_compile_seconds() -> float:
    """The seconds the calling thread itself has spent so far compiling, loading or waiting for kernels: what a
    search timed on this thread includes of it (another thread's compile at the same moment is not counted)."""
    return _COMPILE_CLOCK.thread_seconds()


_DEFERRED: list[Any] = []  # every kernel with signatures, in definition order


def _deferred(dispatcher: Any, signatures: list[Any]) -> Any:
    """Make `dispatcher` compile `signatures` on first need, then take no other types (as `njit(signatures)` does
    at once): its typing by a calling kernel and its compile-on-call from Python first call `ready()`."""
    from numba.core.compiler_lock import global_compiler_lock

    template = dispatcher.get_call_template

    def ready() -> None:
        if dispatcher._can_compile:
            _COMPILE_CLOCK.enter()  # waiting for the lock while another thread compiles counts as this one's too
            try:
                with global_compiler_lock:  # the lock numba compiles under (re-entrant), so no second lock to order
                    if dispatcher._can_compile:
                        for sig in signatures:
                            dispatcher.compile(sig)
                        dispatcher.disable_compile()
            finally:
                _COMPILE_CLOCK.leave()

    def get_call_template(args: Any, kws: Any) -> Any:
        ready()
        return template(args, kws)

    def compile_for_args(*args: Any, **kws: Any) -> Any:
        ready()  # numba calls what this returns with the same arguments: the dispatcher again, which with
        return dispatcher  # compiling disabled converts them to a signature or says why not

    dispatcher.get_call_template = get_call_template
    dispatcher._compile_for_args = compile_for_args
    dispatcher.starroute_ready = ready
    _DEFERRED.append(dispatcher)
    return dispatcher


def ready_all() -> None:
    """Load (or compile) every kernel with signatures of the modules imported so far."""
    for dispatcher in list(_DEFERRED):
        dispatcher.starroute_ready()


def entry(dispatcher: Any) -> Any:
    """The compiled entry point of a kernel with one explicit signature (loaded or compiled now), called without the
    dispatcher's per-call type matching (about 3 us for the search core's 18 arguments, three of them named tuples of
    arrays: a tenth of a short query). Nothing is checked: callers pass exactly the signature's types. Other kernels
    are returned as they are."""
    ready = getattr(dispatcher, "starroute_ready", None)
    if ready is None:
        return dispatcher
    ready()
    sigs = dispatcher.signatures
    return dispatcher.overloads[sigs[0]].entry_point if len(sigs) == 1 else dispatcher


class Entries:
    """One kernel's compiled entry points, each kept per the identity of the arguments whose types vary between
    callers (named tuples of arrays, arrays): a call through one skips the dispatcher's per-call typing of every
    argument, which types a named tuple in Python element by element (about 12 us of `_snap_point`'s 33 us on
    Porto). The entry holds those arguments, so their ids stay theirs. Nothing is checked: every other argument must
    come in the one type it always has (a Python float, int or bool)."""

    def __init__(self, dispatcher: Any, limit: int = 64) -> None:
        self.dispatcher = dispatcher
        self.limit = limit  # derived routers come and go: past this many, the old entries are forgotten
        self._by_key: dict[tuple[int, ...], tuple[Any, tuple]] = {}

    def get(self, args: tuple, held: tuple) -> Any:
        """The entry point for `args`, found by the ids of `held` (the varying ones among them), compiled or loaded
        the first time (a new thread's labels: the kernel is loaded already, no compile to count)."""
        key = tuple(map(id, held))
        got = self._by_key.get(key)
        if got is None:
            import numba

            sig = tuple(numba.typeof(a) for a in args)
            if sig not in self.dispatcher.overloads:
                self.dispatcher.compile(sig)
            if len(self._by_key) >= self.limit:
                self._by_key.clear()
            got = self._by_key[key] = (self.dispatcher.overloads[sig].entry_point, held)
        return got[0]


class _FirstCompile(event.Listener):
    """Calls `hook()` once, at the first kernel compilation (a cache miss) while registered."""

    def __init__(self, hook: Callable[[], None]) -> None:
        self.hook = hook
        self.fired = False
        self.started = 0.0
        self._lock = threading.Lock()

    def on_start(self, ev: event.Event) -> None:
        with self._lock:
            if self.fired:
                return
            self.fired = True
            self.started = time.perf_counter()
        self.hook()

    def on_end(self, ev: event.Event) -> None:
        pass


@contextmanager
def announce_compilation(say: Callable[[str], None], what: str, estimate_s: float) -> Iterator[_FirstCompile]:
    """Inside the block, say once that `what` compiles (with an estimate) if any kernel misses the cache.

    The listener is yielded: `.fired` tells afterwards whether anything compiled, `.started` when it began.
    """
    listener = _FirstCompile(
        lambda: say(
            f"compiling {what} (first run after an install or upgrade; about {estimate_s:.0f} s on 2 cores, "
            "then cached for every later start)"
        )
    )
    event.register("numba:compile", listener)
    try:
        yield listener
    finally:
        event.unregister("numba:compile", listener)


class _CacheWrites:
    """numba writes each cache file as `<name>.tmp.<uuid>` and renames it when complete, from whichever thread
    compiles. A signal's clean-up cannot stop that thread, so without this a compile thread could create a new
    temporary file after the clean-up deleted the old ones and before the process exits. Wrapped here: every write
    is counted, and once `hold()` ran a write about to start waits forever (the process is exiting) instead."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.active = 0
        self.held = False

    def install(self) -> None:
        from numba.core.caching import IndexDataCacheFile

        original = IndexDataCacheFile._open_for_write
        if getattr(original, "starroute_guarded", False):
            return
        guard = self

        @contextmanager
        def open_for_write(cache_file: Any, filepath: str) -> Iterator[Any]:
            with guard.cond:
                while guard.held:
                    guard.cond.wait()  # never notified once held: the process exits around this thread
                guard.active += 1
            try:
                with original(cache_file, filepath) as f:
                    yield f
            finally:
                with guard.cond:
                    guard.active -= 1
                    guard.cond.notify_all()

        open_for_write.starroute_guarded = True  # type: ignore[attr-defined]
        setattr(IndexDataCacheFile, "_open_for_write", open_for_write)  # noqa: B010 - a private method replaced

    def hold(self, timeout_s: float) -> bool:
        """Let no cache write start from now on; wait up to `timeout_s` for those under way to finish (renamed into
        place). Returns whether none is left under way."""
        deadline = time.monotonic() + timeout_s
        with self.cond:
            self.held = True
            while self.active:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.cond.wait(left)
        return True


_CACHE_WRITES = _CacheWrites()
_CACHE_WRITES.install()


def hold_cache_writes(timeout_s: float = 0.5) -> bool:
    """Stop this process's compile threads from starting a cache file, and let those under way finish (at most
    `timeout_s`): called on a signal before removing partial files, so that none appears after the removal."""
    return _CACHE_WRITES.hold(timeout_s)


def remove_partial_files(dirs: list[str], since: float) -> int:
    """Delete numba's half-written cache files (`*.tmp.<uuid>`) newer than `since` (a process stopped mid-write)."""
    removed = 0
    for d in dirs:
        for path in glob.glob(os.path.join(d, "**", "*.tmp.*"), recursive=True):
            try:
                if os.stat(path).st_mtime >= since - 1.0:
                    os.unlink(path)
                    removed += 1
            except OSError:
                pass
    return removed
