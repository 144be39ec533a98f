#!/bin/sh
# Ninth session, device call 4, on a fresh pack of the final code (prologue reorder, sliced reduce):
# qwen3-next-80b-a3b's own decode problems at tp 4 (g 4, hkv 1 after replication, d 256: keys the
# law was not fitted on), then tests/device/attn_shapes.json; the database comes back without code.
set -u
t0=$(date +%s)
KT_DEVICE_STEPS=attnsweep KT_ATTN_MODEL=models/qwen3-next-80b-a3b KT_ATTN_TP=4 KT_ATTN_BUDGET_MIN=${HELD_MIN:-1.3} \
  KT_ATTN_SHAPES_MIN=${SWEEP_MIN:-6} sh tests/device/run_all.sh | tail -8
echo "sweep done $(( $(date +%s) - t0 )) s"
