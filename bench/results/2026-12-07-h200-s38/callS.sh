#!/bin/sh
# Thirty-eighth session, device call S: s37's call A (the issue's tp 4 sweep of Qwen3-Next-80B-A3B,
# only on the bars' H200) over out/s38/all.ktdb.xz, built at this session's templates (`./tune
# --modelpath models/qwen3-next-80b-a3b --tp 4 --target sm_90a --no-device`, code of non-ok kernels
# dropped). Carry out/bin out/lib out/device out/s38. $OUT/s1.tgz, the database beside.
DBX=out/s38/all.ktdb.xz N=${N:-s1} exec sh bench/results/2026-12-07-h200-s37/callA.sh
