"""ONNX Runtime through its C API (ctypes), for a process that embeds one text and exits (ADR 0052).

The ``onnxruntime`` Python package is a pybind11 module over the same engine; importing it imports NumPy, and the two
cost a one-shot ``recall "…"`` or ``add`` ~110 ms of CPU (~40 % of it here) before a token is embedded. Its wheel
ships the engine as a plain shared library too (``capi/libonnxruntime.so.<version>``); loading that with ``ctypes``
costs ~3 ms. This module offers the few parts of the Python package's surface that :mod:`cerebro.embed.local` uses
to open a session — ``SessionOptions``, ``GraphOptimizationLevel``, ``InferenceSession``, ``__version__`` — so that
the graph cache is opened and built by the same code either way, and a session that returns one window's hidden
states as a flat ``array('f')``. The same engine, options and graph give the same numbers as the Python package.

The C API is a table of function pointers (``OrtApi``) whose slots never move: a slot's index below is its position
in ``onnxruntime_c_api.h`` (checked against the header's own ``static_assert``s); a slot added later than API_VERSION
is never used. Every call that can fail returns an ``OrtStatus*``; a failure raises :class:`OrtError` with its text.
:func:`load` returns None where the library is missing or refuses the version: the caller then imports the package.
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import sys
import threading
from array import array
from collections.abc import Callable
from ctypes import POINTER, byref, c_char_p, c_int, c_int64, c_size_t, c_uint32, c_void_p
from pathlib import Path
from typing import Any, TypeVar

API_VERSION = 13  # every slot used below dates from version 5 or earlier
_SLOTS = 131  # slots read from the table: up to AddSessionConfigEntry
_LOG_ERROR = 3  # ORT_LOGGING_LEVEL_ERROR: warnings would land on the caller's stderr
_INT64, _FLOAT = 7, 1  # ONNXTensorElementDataType
_ARENA, _MEM_DEFAULT = 1, 0  # OrtArenaAllocator, OrtMemTypeDefault
INPUTS = (b"input_ids", b"attention_mask", b"token_type_ids")
OUTPUT = b"last_hidden_state"  # the pinned model's only output (and its float graph's)
T = TypeVar("T")
_PATH = ctypes.c_wchar_p if sys.platform == "win32" else c_char_p  # ORTCHAR_T


class OrtError(RuntimeError):
    """ONNX Runtime refused a call: its own message."""


class GraphOptimizationLevel:
    ORT_DISABLE_ALL = 0
    ORT_ENABLE_BASIC = 1
    ORT_ENABLE_EXTENDED = 2
    ORT_ENABLE_ALL = 99


def library_path() -> Path | None:
    """The engine's shared library inside the installed ``onnxruntime`` package, found without importing it."""
    try:
        spec = importlib.util.find_spec("onnxruntime")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    capi = Path(next(iter(spec.submodule_search_locations))) / "capi"
    names = {"win32": "onnxruntime.dll", "darwin": "libonnxruntime*.dylib"}.get(sys.platform, "libonnxruntime.so.*")
    found = sorted(capi.glob(names))
    return found[0] if found else None


class _Api:
    """The function table of one loaded library, each slot typed as the header declares it."""

    def __init__(self, lib: ctypes.CDLL) -> None:
        lib.OrtGetApiBase.restype = POINTER(c_void_p * 2)
        base = lib.OrtGetApiBase().contents
        get_api = ctypes.CFUNCTYPE(c_void_p, c_uint32)(base[0])
        self.version = ctypes.CFUNCTYPE(c_char_p)(base[1])().decode()
        table = get_api(API_VERSION)
        if not table:
            raise OrtError(f"ONNX Runtime {self.version} does not offer C API version {API_VERSION}")
        self._table = ctypes.cast(table, POINTER(c_void_p * _SLOTS)).contents
        status = c_void_p  # OrtStatus*: NULL on success
        self.error_message = self._slot(2, c_char_p, c_void_p)
        self.release_status = self._slot(93, None, c_void_p)
        self.create_env = self._slot(3, status, c_int, c_char_p, POINTER(c_void_p))
        self.create_session = self._slot(7, status, c_void_p, _PATH, c_void_p, POINTER(c_void_p))
        self.create_session_from_array = self._slot(
            8, status, c_void_p, c_char_p, c_size_t, c_void_p, POINTER(c_void_p)
        )
        self.run = self._slot(
            9, status, c_void_p, c_void_p, POINTER(c_char_p), POINTER(c_void_p), c_size_t, POINTER(c_char_p),
            c_size_t, POINTER(c_void_p),
        )  # fmt: skip
        self.create_session_options = self._slot(10, status, POINTER(c_void_p))
        self.set_optimized_model_path = self._slot(11, status, c_void_p, _PATH)
        self.set_log_severity = self._slot(22, status, c_void_p, c_int)
        self.set_optimization_level = self._slot(23, status, c_void_p, c_int)
        self.set_intra_threads = self._slot(24, status, c_void_p, c_int)
        self.set_inter_threads = self._slot(25, status, c_void_p, c_int)
        self.create_tensor = self._slot(
            49, status, c_void_p, c_void_p, c_size_t, POINTER(c_int64), c_size_t, c_int, POINTER(c_void_p)
        )
        self.tensor_data = self._slot(51, status, c_void_p, POINTER(c_void_p))
        self.element_type = self._slot(60, status, c_void_p, POINTER(c_int))
        self.dimensions_count = self._slot(61, status, c_void_p, POINTER(c_size_t))
        self.dimensions = self._slot(62, status, c_void_p, POINTER(c_int64), c_size_t)
        self.type_and_shape = self._slot(65, status, c_void_p, POINTER(c_void_p))
        self.create_cpu_memory_info = self._slot(69, status, c_int, c_int, POINTER(c_void_p))
        self.release_env = self._slot(92, None, c_void_p)
        self.release_memory_info = self._slot(94, None, c_void_p)
        self.release_session = self._slot(95, None, c_void_p)
        self.release_value = self._slot(96, None, c_void_p)
        self.release_type_and_shape = self._slot(99, None, c_void_p)
        self.release_session_options = self._slot(100, None, c_void_p)
        self.add_config_entry = self._slot(130, status, c_void_p, c_char_p, c_char_p)

    def _slot(self, index: int, restype: Any, *argtypes: Any) -> Any:  # noqa: ANN401 - a ctypes function
        address = self._table[index]
        if not address:
            raise OrtError(f"ONNX Runtime {self.version} has no C API function at slot {index}")
        return ctypes.CFUNCTYPE(restype, *argtypes)(address)

    def check(self, status: int | None) -> None:
        if status:
            message = (self.error_message(status) or b"").decode(errors="replace")
            self.release_status(status)
            raise OrtError(message)

    def new(self, create: Any, *args: Any) -> c_void_p:  # noqa: ANN401 - a ctypes function and its arguments
        """An object made by ``create(*args, &out)``."""
        out = c_void_p()
        self.check(create(*args, byref(out)))
        return out


class Runtime:
    """One loaded engine: the subset of the ``onnxruntime`` module that cerebro's session code uses."""

    GraphOptimizationLevel = GraphOptimizationLevel

    def __init__(self, path: Path) -> None:
        import atexit

        self.api = _Api(ctypes.CDLL(str(path)))
        self.__version__ = self.api.version
        self.env = self.api.new(self.api.create_env, _LOG_ERROR, b"cerebro")
        try:
            self.memory = self.api.new(self.api.create_cpu_memory_info, _ARENA, _MEM_DEFAULT)
        except OrtError:
            self.api.release_env(self.env)  # this engine is not used (load() answers None): leave nothing behind
            raise
        self.sessions: list[c_void_p] = []
        self.closed = False
        # Released before the interpreter exits: ONNX Runtime 1.21–1.22 on macOS abort at exit when an environment
        # was created and never released (microsoft/onnxruntime#24579). No run is under way then: the caller
        # threads of a bulk embed are joined before it returns.
        atexit.register(self.close)

    def close(self) -> None:
        """Release every session, then the memory description and the environment; the sessions refuse runs after."""
        if self.closed:
            return
        self.closed = True
        for handle in self.sessions:
            self.api.release_session(handle)
        self.api.release_memory_info(self.memory)
        self.api.release_env(self.env)

    def SessionOptions(self) -> Options:  # noqa: N802 - the Python package's name for it
        return Options(self.api)

    def InferenceSession(  # noqa: N802 - the Python package's name for it
        self, source: str | bytes, sess_options: Options, providers: list[str] | None = None
    ) -> Session:
        del providers  # the CPU provider is the C API's default and the only one cerebro asks for
        api, options = self.api, sess_options.apply()
        try:
            if isinstance(source, bytes):
                handle = api.new(api.create_session_from_array, self.env, source, len(source), options)
            else:
                handle = api.new(api.create_session, self.env, _path(source), options)
        finally:
            api.release_session_options(options)
        self.sessions.append(handle)
        return Session(self, handle)


class Options:
    """Recorded as the Python package's attributes, applied to a fresh ``OrtSessionOptions`` when a session opens."""

    def __init__(self, api: _Api) -> None:
        self._api = api
        self.intra_op_num_threads = 0
        self.inter_op_num_threads = 0
        self.log_severity_level = 2
        self.graph_optimization_level = GraphOptimizationLevel.ORT_ENABLE_ALL
        self.optimized_model_filepath = ""
        self._entries: list[tuple[str, str]] = []

    def add_session_config_entry(self, key: str, value: str) -> None:
        self._entries.append((key, value))

    def apply(self) -> c_void_p:
        api = self._api
        options = api.new(api.create_session_options)
        try:
            api.check(api.set_intra_threads(options, self.intra_op_num_threads))
            api.check(api.set_inter_threads(options, self.inter_op_num_threads))
            api.check(api.set_log_severity(options, self.log_severity_level))
            api.check(api.set_optimization_level(options, self.graph_optimization_level))
            if self.optimized_model_filepath:
                api.check(api.set_optimized_model_path(options, _path(self.optimized_model_filepath)))
            for key, value in self._entries:
                api.check(api.add_config_entry(options, key.encode(), value.encode()))
        except BaseException:
            api.release_session_options(options)
            raise
        return options


class Session:
    """An open session; :meth:`hidden_states` runs it on one window (thread-safe, as ONNX Runtime's runs are)."""

    def __init__(self, runtime: Runtime, handle: c_void_p) -> None:
        self._runtime = runtime
        self._handle = handle
        self._names = (c_char_p * 3)(*INPUTS)
        self._output = (c_char_p * 1)(OUTPUT)

    def hidden_states(self, window: list[int], dimensions: int) -> array:
        """The model's last hidden states of ``window`` (token ids, one row, no padding): ``len(window) × dimensions``
        float32 values, token by token."""
        if self._runtime.closed:
            raise OrtError("ONNX Runtime was released (the interpreter is exiting)")
        api, memory = self._runtime.api, self._runtime.memory
        count = len(window)
        shape = (c_int64 * 2)(1, count)
        columns = [(c_int64 * count)(*window), (c_int64 * count)(*([1] * count)), (c_int64 * count)()]
        inputs = (c_void_p * 3)()
        output = (c_void_p * 1)()
        try:
            for k, column in enumerate(columns):
                inputs[k] = api.new(api.create_tensor, memory, column, 8 * count, shape, 2, _INT64).value
            api.check(api.run(self._handle, None, self._names, inputs, 3, self._output, 1, output))
            kind, shape_out = _type_and_shape(api, output[0])
            if kind != _FLOAT or shape_out != [1, count, dimensions]:
                raise OrtError(f"the model gave type {kind} {shape_out} for a window of {count} tokens")
            data = c_void_p()
            api.check(api.tensor_data(output[0], byref(data)))
            values = array("f")
            values.frombytes(ctypes.string_at(data, 4 * count * dimensions))
            return values
        finally:
            for value in (*inputs, *output):
                if value:
                    api.release_value(value)


def _type_and_shape(api: _Api, value: int | None) -> tuple[int, list[int]]:
    """An output's element type (ONNXTensorElementDataType) and dimensions: read before its data is."""
    info = api.new(api.type_and_shape, value)
    try:
        kind = c_int()
        api.check(api.element_type(info, byref(kind)))
        rank = c_size_t()
        api.check(api.dimensions_count(info, byref(rank)))
        dims = (c_int64 * rank.value)()
        api.check(api.dimensions(info, dims, rank.value))
        return kind.value, list(dims)
    finally:
        api.release_type_and_shape(info)


def _path(path: str) -> str | bytes:
    """A path as ORTCHAR_T wants it: wide characters on Windows, else the file system's bytes (any name it holds)."""
    return path if sys.platform == "win32" else os.fsencode(path)


_RUNTIME: list[Runtime | None] = []  # loaded once a process: [] not tried yet, [None] unavailable
_LOCK = threading.Lock()


def load() -> Runtime | None:
    """The engine through its C API, or None where its library cannot be found or loaded (then: the package)."""
    with _LOCK:
        if not _RUNTIME:
            path = library_path()
            try:
                _RUNTIME.append(Runtime(path) if path is not None else None)
            except (OSError, AttributeError, OrtError) as exc:
                _RUNTIME.append(None)
                _not_used(" ".join(str(exc).split()) or type(exc).__name__)
            else:
                if path is None:
                    _not_used("no ONNX Runtime library beside the onnxruntime package")
        return _RUNTIME[0]


def _not_used(reason: str) -> None:
    """A diagnostic (shown under CEREBRO_LOG=info, ADR 0024): the package answers instead, a little slower to start."""
    from cerebro import logs

    logs.info("onnxruntime_c_api_not_used", reason=reason)


def open_session(open_with: Callable[[Any], T], *, c_api: bool) -> T:
    """``open_with(engine)`` on the C API's engine when ``c_api`` and :func:`load` can, else — or when the C API
    refuses what it was given — on the ``onnxruntime`` package, which answers for itself then: never worse than
    before the C API was used."""
    loaded = load() if c_api else None
    if loaded is not None:
        try:
            return open_with(loaded)
        except OrtError:
            pass
    import onnxruntime

    return open_with(onnxruntime)
