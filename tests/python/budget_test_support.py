"""What the tests of tests/python share: the repository's paths and the CLI (ctest sets
BUDGET_SOURCE_DIR and BUDGET_CLI), the check that a call raises budget.Error naming its source, and
the runner ctest uses where pytest is not installed. Not a test file (pytest collects test_*.py)."""

import os
import sys

import budget

SOURCE = os.environ.get("BUDGET_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
CLI = os.environ.get("BUDGET_CLI")
BASELINE = os.path.join(SOURCE, "examples", "configs", "paper-200M-S95-baseline.json")  # 12 MoE layers
SMELT = os.path.join(SOURCE, "examples", "configs", "paper-200M-S95-smelt.json")
MIXTRAL = os.path.join(SOURCE, "examples", "hf", "mixtral-8x7b.json")
H200 = os.path.join(SOURCE, "examples", "clusters", "h200.json")
PROFILE = os.path.join(SOURCE, "cuda_profiler", "profiles", "h200-torch-eager.json")


def raises_budget_error(call, source, fragment=""):
    """The budget.Error `call()` raises, checked to name `source` and hold `fragment` in its message;
    any other outcome (no error, another exception type) fails."""
    try:
        call()
    except budget.Error as e:
        assert e.source == source, (e.source, str(e))
        assert fragment in e.message, (fragment, e.message)
        return e
    except Exception as e:  # noqa: BLE001 - the point is which type escapes
        raise AssertionError(f"{type(e).__name__} instead of budget.Error: {e}")
    raise AssertionError("no budget.Error")


def run_tests(namespace):
    """Runs every test_* function of a test file's globals() in name order, printing each one that
    passed. Call it last in the file, so that every test is defined when it runs."""
    tests = [(name, fn) for name, fn in sorted(namespace.items()) if name.startswith("test_") and callable(fn)]
    for name, fn in tests:
        fn()
        print("ok", name)
    print(f"{len(tests)} tests passed", file=sys.stderr)
