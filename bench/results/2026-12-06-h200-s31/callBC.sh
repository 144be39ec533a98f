#!/bin/sh
# Thirty-first session: calls B and C in one device call (each start was being refused): callB.sh,
# then callC.sh with a 6-minute sweep budget. Carry out/lib out/d8 out/d9 out/bin out/device out/s31.
sh bench/results/2026-12-06-h200-s31/callB.sh
BUDGET=${BUDGET:-6} sh bench/results/2026-12-06-h200-s31/callC.sh
