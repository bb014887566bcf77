"""budget: compute-matched planning for looped Mixture-of-Experts transformers.

Configs, workloads, constraints and grids are accepted as file paths, dicts (the JSON documents) or
budget.Config objects; results are plain dicts with the keys of budget-match's JSON outputs
(docs/cli.md). Bad input raises budget.Error (a ValueError): .source (also .file: the file or the argument name),
.path (the JSON pointer), .message (the value and what is allowed) and .value (the offending value
as found at .path in the input, or None when there is none, e.g. a missing key). See
docs/python.md.

Every function takes max_seconds= (a time limit in seconds, None: none, the default) and stops
between units of work on Ctrl-C (KeyboardInterrupt) or at the limit (budget.Error).

Thread safety: every function is reentrant; the GIL is held while the C++ code runs.
"""

import functools
import json
import os

from . import _budget
from ._budget import Config, Error, __version__, schema_version  # noqa: F401

__all__ = ["Config", "Error", "account", "export", "grid", "layout", "layout_fields", "layout_search", "load_config",
           "match", "peak_saved_layer_executions", "predict_time", "schema_version", "__version__"]


def _value_at(document, pointer):
    """The value at a JSON pointer ("/ffn/top_k", RFC 6901) of a parsed document; KeyError if absent."""
    value = document
    for token in pointer.split("/")[1:]:
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(value, list):
            value = value[int(token)]
        elif isinstance(value, dict):
            value = value[token]
        else:
            raise KeyError(token)
    return value


def _offending_value(error, inputs):
    """The input value an Error points at: the dict passed as the argument it names, or the JSON
    file it names, resolved at its path."""
    if not error.path.startswith("/"):
        return None
    for name, given in inputs.items():
        document = None
        if isinstance(given, dict) and error.source == name:
            document = given
        elif isinstance(given, (str, os.PathLike)) and os.fspath(given) == error.source:
            try:
                with open(error.source, encoding="utf-8") as f:
                    document = json.load(f)
            except (OSError, ValueError):
                return None
        if document is not None:
            try:
                return _value_at(document, error.path)
            except (KeyError, IndexError, ValueError, TypeError):
                return None
    return None


def _argument_type_error(function, error):
    """budget.Error for pybind11's TypeError of an argument of the wrong type given to `function`
    itself (its message names the function and the argument types it takes), else None."""
    text = str(error)
    if not text.startswith(function.__name__ + "(): incompatible function arguments"):
        return None
    converted = Error(text)
    converted.source = converted.file = function.__name__
    converted.path = ""
    converted.message = text
    converted.value = None
    return converted


def _reports_values(function, *names):
    """`function` with max_seconds= (a time limit, None: none; Ctrl-C stops the call between units
    of work either way), every error a budget.Error whose .value is the offending input value."""

    @functools.wraps(function)
    def wrapper(*args, max_seconds=None, **kwargs):
        inputs = dict(zip(names, args))
        inputs.update({k: v for k, v in kwargs.items() if k in names})
        try:
            return _budget._call_bounded(function, max_seconds, *args, **kwargs)
        except Error as error:
            error.value = _offending_value(error, inputs)
            raise
        except TypeError as error:
            converted = _argument_type_error(function, error)
            if converted is None:
                raise
            raise converted from None

    return wrapper


load_config = _reports_values(_budget.load_config, "config")
account = _reports_values(_budget.account, "config", "workload")
match = _reports_values(_budget.match, "baseline", "loop", "span_fraction", "repeats", "workload", "constraints", "top",
                        "calibration", "cluster")
grid = _reports_values(_budget.grid, "grid", "span_fraction", "repeats", "workload", "constraints", "free_shapes",
                       "order", "all_trainable_shapes")
export = _reports_values(_budget.export, "config", "to", "hf_template", "row")
predict_time = _reports_values(_budget.predict_time, "config", "calibration", "workload")
layout = _reports_values(_budget.layout, "config", "cluster")
layout_search = _reports_values(_budget.layout_search, "config", "cluster")
layout_fields = _reports_values(_budget.layout_fields)
peak_saved_layer_executions = _reports_values(_budget.peak_saved_layer_executions, "chunk_layers", "pp",
                                              "micro_batches")
