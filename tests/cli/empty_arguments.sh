#!/bin/bash
# Empty file names are clear exit-2 errors (CMake cannot pass "" through budget_cli_test's ARGS).
# Usage: empty_arguments.sh BUDGET_MATCH
set -u
exe=$1
check() {  # check EXPECTED_MESSAGE ARGS...
  local expected=$1; shift
  local err rc
  err=$("$exe" "$@" 2>&1 >/dev/null); rc=$?
  if [ "$rc" -ne 2 ]; then echo "budget-match $*: exit $rc, expected 2: $err"; exit 1; fi
  if ! grep -qF -- "$expected" <<<"$err"; then echo "budget-match $*: message '$err' lacks '$expected'"; exit 1; fi
}
check '"": the file name is empty' report ""
check '--baseline: the file name is empty' --baseline ""
check '"": the file name is empty' fit ""
echo ok
