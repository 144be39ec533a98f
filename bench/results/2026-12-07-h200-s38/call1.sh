#!/bin/sh
# Thirty-eighth session, device call 1 (any card, ~6 minutes): call Q (_wy's transposes and
# products, _out's products, the state pass's decay: A/B against s37's build, Nsight on the three
# launches). Carry out/lib out/device out/s38 out/s40b. Then, on the same warm machine, s37's
# callDF.sh (carry out/bin out/lib out/device out/s40b).
set -u
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader | head -1
sh bench/results/2026-12-07-h200-s38/callQ.sh
