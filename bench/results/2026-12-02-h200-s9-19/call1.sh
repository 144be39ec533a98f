#!/bin/sh
# Ninth session, device call 1: the decode sweep over tests/device/attn_shapes.json with this
# session's reduce and law (the database comes back without code: restore_code.sh).
set -u
t0=$(date +%s)
KT_DEVICE_STEPS=attnsweep KT_ATTN_BUDGET_MIN=0 KT_ATTN_SHAPES_MIN=${SWEEP_MIN:-6.8} sh tests/device/run_all.sh
echo "sweep done $(( $(date +%s) - t0 )) s"
