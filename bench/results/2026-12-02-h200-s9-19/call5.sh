#!/bin/sh
# Ninth session, device call 5, on call 4's swept database (its code restored): ktrt_check, the
# check grid and the timing grid.
set -u
t0=$(date +%s)
KT_DEVICE_STEPS=ktrt,attncheck,attnbench sh tests/device/run_all.sh | tail -8
echo "done $(( $(date +%s) - t0 )) s"
