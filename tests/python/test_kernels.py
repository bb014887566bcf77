"""Tests of the kernel target in the Python module (issue 43; docs/kernels.md): match(gpu=,
precision=, attention_backend=) and grid(gpu=, ...) give the CLI's JSON with --gpu/--precision, and
without gpu both search the CLI's default, the portable set (all_trainable_shapes=True opts out).

References: Mixtral-8x7B on B200 + MXFP8 has a padded row #1 (168 on FlashAttention-2's 192
kernel) and its best native shape at +3.12% KV (docs/kernels.md, "Measured"); a precision without
a GPU, and MXFP8 on Hopper, are refused naming the argument.
"""

import json
import subprocess

import budget
from budget_test_support import CLI, BASELINE, MIXTRAL, run_tests


def test_match_with_a_kernel_target():
    r = budget.match(MIXTRAL, top=2, gpu="b200", precision="mxfp8")
    assert r["summary"]["kernel_stack"]["arch"] == "sm100"
    assert r["summary"]["kernel_stack"]["gemm_width_multiple"] == 32
    first = r["candidates"][0]["kernel_fit"]
    assert first["fit"] == "padded" and first["executed_head_dims"] == [192, 192]
    reach = r["summary"]["native_reach"]
    assert reach["best_native"]["kernel_fit"]["fit"] == "native"
    assert abs(reach["best_native"]["deviation"]["kv"] - 0.03125) < 1e-9
    if CLI:
        out = subprocess.run([CLI, "--baseline", MIXTRAL, "--top", "2", "--gpu", "b200", "--precision", "mxfp8",
                              "--format", "json"], check=True, capture_output=True, text=True)
        assert json.loads(out.stdout)["candidates"] == r["candidates"]


def test_kernel_target_refusals():
    for kwargs, where in (({"precision": "mxfp8"}, "precision"), ({"gpu": "h100-sxm", "precision": "mxfp8"}, "precision"),
                          ({"gpu": "mi300x"}, "gpu")):
        try:
            budget.match(MIXTRAL, top=1, **kwargs)
        except budget.Error as e:
            assert where in str(e)
        else:
            raise AssertionError(f"{kwargs} was not refused")


def test_grid_with_a_kernel_target():
    g = budget.grid(gpu="h100-sxm", attention_backend="fa3")
    fits = [cell["matched"]["kernel_fit"]["fit"] for cell in g["cells"]]
    assert len(fits) == 16 and "refused" not in fits
    assert all(cell["kernel_stack"]["attention_backend"] == "fa3" for cell in g["cells"])


def test_default_shape_set_is_the_clis():
    # Without a kernel target Python's match() and grid() search the portable set, as budget-match
    # does without --gpu (issue 43): the same row #1 and the same best off the portable set on the
    # 200M baseline; all_trainable_shapes=True is --all-trainable-shapes (every trainable shape).
    default = budget.match(BASELINE, top=1)
    assert default["summary"]["shapes"] == "portable"
    assert default["candidates"][0]["config"]["attention"]["head_dim"] in (64, 128, 256)
    trainable = budget.match(BASELINE, top=1, all_trainable_shapes=True)
    assert trainable["summary"]["shapes"] == "trainable"
    assert trainable["candidates"][0]["config"] != default["candidates"][0]["config"]
    off_portable = default["summary"]["native_reach"]["best_off_portable"]
    if CLI:
        out = subprocess.run([CLI, "--baseline", BASELINE, "--top", "1", "--format", "json"], check=True,
                             capture_output=True, text=True)
        cli = json.loads(out.stdout)
        assert cli["summary"]["shapes"] == "portable"
        assert cli["candidates"][0] == default["candidates"][0]
        assert cli["summary"]["native_reach"]["best_off_portable"] == off_portable
        out = subprocess.run([CLI, "grid", "--format", "json"], check=True, capture_output=True, text=True)
        assert [c["matched"] for c in json.loads(out.stdout)["cells"]] == \
            [c["matched"] for c in budget.grid()["cells"]]
    for call in (lambda: budget.match(BASELINE, top=1, gpu="h100-sxm", all_trainable_shapes=True),
                 lambda: budget.grid(gpu="h100-sxm", all_trainable_shapes=True)):
        try:
            call()
        except budget.Error as e:
            assert e.source == "all_trainable_shapes" and "kernel target" in e.message, e
        else:
            raise AssertionError("all_trainable_shapes with gpu was accepted")


if __name__ == "__main__":
    run_tests(globals())
