"""budget: compute-matched planning for looped Mixture-of-Experts transformers.

Configs, workloads, constraints and grids are accepted as file paths, dicts (the JSON documents) or
budget.Config objects; results are plain dicts with the keys of budget-match's JSON outputs
(docs/cli.md). Bad input raises budget.Error (.source: the file or argument, .path: the JSON
pointer, .message: the value and what is allowed). See docs/python.md.

Thread safety: every function is reentrant; the GIL is held while the C++ code runs.
"""

from ._budget import (  # noqa: F401
    Config,
    Error,
    __version__,
    account,
    export,
    grid,
    load_config,
    match,
    schema_version,
)

__all__ = ["Config", "Error", "account", "export", "grid", "load_config", "match", "schema_version", "__version__"]
