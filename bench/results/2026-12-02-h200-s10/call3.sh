#!/bin/sh
# Tenth session, device call 3, on call 2's database (code restored) and the refitted law (libktrt):
# the decode timing grid (tests/device/run_all.sh attnbench) and prefill grid
# (prefillbench: the template's split-KV and row-group changes against the sixth/seventh sessions'
# figures, law picks: this database holds no prefill grid sweep).
set -u
t0=$(date +%s)
KT_DEVICE_STEPS=attnbench,prefillbench OUT=$OUT/bench timeout 560 sh tests/device/run_all.sh | tail -6
tar czf $OUT/bench.tgz -C $OUT bench && rm -rf $OUT/bench
echo "done $(( $(date +%s) - t0 )) s"
