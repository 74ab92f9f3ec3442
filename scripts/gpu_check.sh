#!/usr/bin/env bash
# GPU check: run a focused subset of the tests and the benchmarks with yax on the GPU.
#
#   scripts/gpu_check.sh            # from anywhere; uses .venv/bin/python of this checkout
#   PY=python3 GPU_CHECK_WORKERS=8 scripts/gpu_check.sh
#
# Fails loudly (exit 2) when no GPU backend is present, before running anything else.
# Both yax (YAX_PLATFORM=gpu) and the jax oracle run on the GPU: JAX_PLATFORMS is set empty,
# which jax reads as "all platforms" and which stops tests/conftest.py from defaulting it to cpu.
set -euo pipefail

cd "$(dirname "$0")/.."
PY="${PY:-.venv/bin/python}"
WORKERS="${GPU_CHECK_WORKERS:-4}"

export YAX_PLATFORM=gpu
export JAX_PLATFORMS=""
export PYTHONPATH="${PWD}${PYTHONPATH:+:$PYTHONPATH}"
# several pytest workers share one GPU: do not let each preallocate most of its memory
export XLA_PYTHON_CLIENT_PREALLOCATE=false
export TF_CPP_MIN_LOG_LEVEL="${TF_CPP_MIN_LOG_LEVEL:-1}"

fail() {
    echo "" >&2
    echo "=====================================================================" >&2
    echo "GPU CHECK FAILED: $*" >&2
    echo "=====================================================================" >&2
    exit 2
}

[ -x "$PY" ] || command -v "$PY" >/dev/null || fail "no Python at $PY (run 'make test' first or set PY=)"

echo "== device =="
if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi -L || true
fi
if ! "$PY" - <<'EOF'
import sys

try:
    import jax
    gpus = jax.devices("gpu")
except Exception as e:  # jax raises RuntimeError when no GPU platform can start
    print(f"jax finds no GPU backend: {type(e).__name__}: {e}", file=sys.stderr)
    sys.exit(1)

import yax

backend = yax.default_backend()
if backend != "gpu":
    print(f"yax runs on {backend!r}, not the GPU (YAX_PLATFORM=gpu was ignored?)", file=sys.stderr)
    sys.exit(1)
print(f"jax {jax.__version__}: {gpus}")
print(f"yax backend: {backend}; devices: {yax.devices()}")
x = yax.numpy.arange(4.0)
y = yax.jit(lambda v: yax.numpy.sin(v) @ v)(x)
print(f"jit smoke test on the GPU: {float(y):.6f} (device {getattr(y, 'device', '?')})")
EOF
then
    fail "no GPU backend is present (jax/jaxlib need the CUDA or ROCm plugin, e.g. pip install 'jax[cuda12]', and a visible GPU)"
fi

echo ""
echo "== tests (core, jit, autodiff, vmap, control flow, linalg, random, programs) on the GPU =="
shopt -s nullglob
TESTS=(tests/test_core.py tests/test_jit.py tests/test_ad_*.py tests/test_vmap_*.py
       tests/test_cond.py tests/test_scan.py tests/test_while_loop.py
       tests/test_control_flow_nesting.py tests/test_linalg_*.py tests/test_random*.py
       tests/test_programs*.py)
shopt -u nullglob
XDIST=()
if [ "$WORKERS" -gt 1 ] && "$PY" -c "import xdist" 2>/dev/null; then
    XDIST=(-n "$WORKERS" --dist loadfile)
fi
"$PY" -m pytest -q "${XDIST[@]}" "${TESTS[@]}" || fail "tests failed on the GPU (see above)"

echo ""
echo "== benchmarks on the GPU (yax vs jax, as ratios) =="
"$PY" benchmarks/run.py || fail "benchmarks/run.py failed on the GPU"

echo ""
echo "GPU check passed."
