#!/usr/bin/env bash
# Install the peer engines of bench/peers/compare.py, each into its own virtual
# environment beside this script (their pinned dependencies clash with kleene's):
#
#   bench/peers/.venv-flink   apache-flink (PyFlink; the SQL MATCH_RECOGNIZE of flink-cep)
#   bench/peers/.venv-pmr     pandas-match-recognize
#
# Usage: bash bench/peers/setup.sh [flink|pmr]...    (no argument: both)
# Environment: PYTHON (interpreter for the venvs, default python3),
#              FLINK_VERSION (default 2.3.0), PMR_VERSION (default 0.2.5).
# Flink needs a Java 11 or 17 runtime on PATH (or JAVA_HOME).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
python="${PYTHON:-python3}"
flink_version="${FLINK_VERSION:-2.3.0}"
pmr_version="${PMR_VERSION:-0.2.5}"

make_venv() {
    local dir="$1"
    shift
    if [[ ! -x "$dir/bin/python" ]]; then
        "$python" -m venv "$dir"
    fi
    "$dir/bin/python" -m pip install --quiet --upgrade pip
    "$dir/bin/python" -m pip install --quiet "$@"
}

setup_flink() {
    if ! command -v java >/dev/null 2>&1 && [[ -z "${JAVA_HOME:-}" ]]; then
        echo "setup.sh: Flink needs Java 11 or 17 (java on PATH or JAVA_HOME)" >&2
        return 1
    fi
    make_venv "$here/.venv-flink" "apache-flink==$flink_version" pyarrow
    "$here/.venv-flink/bin/python" -c "import pyflink, pyarrow; print('flink venv ok:', pyflink.__file__)"
}

setup_pmr() {
    make_venv "$here/.venv-pmr" "pandas-match-recognize==$pmr_version" pyarrow
    "$here/.venv-pmr/bin/python" -c "import pandas, pyarrow; print('pmr venv ok, pandas', pandas.__version__)"
}

targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then
    targets=(flink pmr)
fi
for target in "${targets[@]}"; do
    case "$target" in
        flink) setup_flink ;;
        pmr) setup_pmr ;;
        *) echo "setup.sh: unknown target $target (expected flink or pmr)" >&2; exit 2 ;;
    esac
done
