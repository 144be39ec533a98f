#!/bin/sh
# Thirty-eighth session, device call 1 (any card, ~7 minutes): call Q (_wy's transposes and
# products, _out's products: A/B against s37's build, Nsight on _wy and _out), then s37's call DF
# (the batch-128 norm hand-off, the parts law's held-out regret). Carry out/bin out/lib
# out/device out/s38 out/s40b.
set -u
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
sh bench/results/2026-12-07-h200-s38/callQ.sh
sh bench/results/2026-12-07-h200-s37/callDF.sh
