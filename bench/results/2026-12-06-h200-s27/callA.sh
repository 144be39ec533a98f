#!/bin/sh
# Twenty-seventh session, device call A: the twenty-sixth session's call1.sh as prepared (decode
# split norm, batch 128 BV 32 / 128, PF 2 / PF 1, c31 / PF 1), on the runtime its kernels were
# built for (out/lib_s26: _wy's LDS before X shared A's bytes; out/lib sizes the new _wy's).
# Carry out/lib_s26 out/c31 out/c32. Results: $OUT/s1.tgz.
set -u
mkdir -p out/lib && cp out/lib_s26/libktrt.so out/lib/libktrt.so
exec sh bench/results/2026-12-05-h200-s26/call1.sh
