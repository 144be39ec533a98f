# env.sh: sourced by a device call's script (`. tests/device/env.sh`, from the repository root on
# the GPU machine): the carried luajit and shared libraries first on the paths (./tune runs on
# them), Python unbuffered (a log read after a timeout holds every line), t0 and el (seconds since
# the script started, for each step's echo).
ROOT=$(pwd)
t0=$(date +%s)
export LD_LIBRARY_PATH="$ROOT/out/device/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PATH="$ROOT/out/device/bin:$PATH"
export PYTHONUNBUFFERED=1
el() { echo "$(( $(date +%s) - t0 )) s"; }
