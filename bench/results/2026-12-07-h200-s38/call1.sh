#!/bin/sh
# Thirty-eighth session, device call 1 (any card, ~6 minutes): call Q (the prefill's launches A/B
# against s37's build and the L2 prefetch's own A/B, Nsight on the three launches). The sweep
# (call S, ~8 minutes) waits for a session with the device time for it. Carry out/lib out/device
# out/s38 out/s40b.
set -u
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader | head -1
sh bench/results/2026-12-07-h200-s38/callQ.sh
