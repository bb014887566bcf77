"""Issue 44 (docs/reliability.md, fifth audit) through the Python module: hostile Megatron-LM argument
files given as megatron_args raise budget.Error naming the file and the argument, and a layer range
(loop=) of any length is read. Before: SIGFPE
(the interpreter died) for sizes multiplying past 2^64, SIGSEGV for a 50,000-digit number or
--moe-layer-freq nested 100,000 deep, IndexError ("stod") for a double out of range.
Run by ctest (pytest when installed, else this file's own runner)."""

import os
import tempfile

import budget
from budget_test_support import BASELINE, H200, run_tests


def layout_error(text):
    """The budget.Error of budget.layout() with megatron_args holding `text` (any other outcome fails)."""
    with tempfile.TemporaryDirectory() as work:
        path = os.path.join(work, "team.args")
        with open(path, "w") as f:
            f.write(text + "\n")
        try:
            budget.layout(BASELINE, H200, gpus=8, megatron_args=path)
        except budget.Error as e:
            assert e.source == path, (e.source, str(e))
            return e.message
        except Exception as e:  # noqa: BLE001 - the point is which type escapes
            raise AssertionError(f"{type(e).__name__} instead of budget.Error: {e}")
    raise AssertionError("no budget.Error")


def test_products_past_64_bits_refused():
    message = layout_error("--seq-length 4096 --tensor-model-parallel-size 4294967296 --context-parallel-size 4294967296")
    assert "TP x CP = 4294967296 * 4294967296 is outside the 64-bit integer range" in message, message
    message = layout_error("--seq-length 4096 --pipeline-model-parallel-size 4294967296 "
                           "--num-layers-per-virtual-pipeline-stage 4294967296")
    assert "PP x --num-layers-per-virtual-pipeline-stage" in message, message


def test_numbers_of_any_length_refused_by_name():
    digits = "1" * 50000
    assert "--hidden-dropout" in layout_error(f"--seq-length 4096 --hidden-dropout {digits}")
    assert "outside the range of a double" in layout_error(f"--seq-length 4096 --hidden-dropout -{digits}")
    assert "outside the range of a double" in layout_error("--seq-length 4096 --hidden-dropout 1e400")
    assert "more than 4300 digits" in layout_error(f"--seq-length {digits}")


def test_moe_layer_freq_bounded():
    nested = "(" * 100000 + "[1]*12" + ")" * 100000
    assert "nested deeper than 200" in layout_error(f"--seq-length 4096 --moe-layer-freq '{nested}'")
    huge = "+".join(["[1]*1048576"] * 850)
    assert "has more than 12 entries" in layout_error(f"--seq-length 4096 --moe-layer-freq '{huge}'")


def test_python_int_forms_read():
    with tempfile.TemporaryDirectory() as work:
        path = os.path.join(work, "team.args")
        with open(path, "w") as f:
            f.write("--seq-length ' 4_096 ' --seed 12345678901234567890\n")
        r = budget.layout(BASELINE, H200, gpus=8, megatron_args=path)
        assert r["layout"]["seq_len"] == 4096
        assert "--seed" in r["megatron_args"]["not_modelled"]


def test_loop_range_of_any_length():
    """loop="FIRST-LAST" is read without std::regex (a 50,000-digit range overflowed its recursion)."""
    try:
        budget.match(BASELINE, loop="1" * 50000 + "-2", top=1)
        raise AssertionError("no budget.Error")
    except budget.Error as e:
        assert e.source == "loop" and "out of range" in e.message, str(e)[:200]
    assert budget.match(BASELINE, loop=" 3 - 10 ", top=1)["candidates"][0]["config"]["loop"]["first"] == 3


if __name__ == "__main__":
    run_tests(globals())
