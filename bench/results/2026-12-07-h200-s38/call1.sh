#!/bin/sh
# Thirty-eighth session, device call 1: on the bars' H200, call S (the tp 4 sweep; call Q next, on
# the same warm machine); on any other card, call Q (_wy's transposes and products, _out's
# products, the state pass's decay: A/B against s37's build, Nsight on the three launches).
# Carry out/bin out/lib out/device out/s38 out/s40b.
set -u
gpu=$(nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader | head -1)
echo "$gpu"
case "$gpu" in
*H200*) sh bench/results/2026-12-07-h200-s38/callS.sh ;;
*) sh bench/results/2026-12-07-h200-s38/callQ.sh ;;
esac
