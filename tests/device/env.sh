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

# call_begin NAME: a call's results folder R=$OUT/NAME, its scratch W (removed by call_end) and
# the runtime L; call_end NAME: R packed into $OUT/NAME.tgz (what comes back), the step's time.
call_begin() {
    R=$OUT/$1
    mkdir -p "$R"
    W=$(mktemp -d)
    L=out/lib/libktrt.so
}
call_end() {
    rm -rf "$W"
    tar czf "$OUT/$1.tgz" -C "$OUT" "$1" && rm -rf "$R"
    echo "done $(el)"
}
