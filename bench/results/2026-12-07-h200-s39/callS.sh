#!/bin/sh
# Thirty-ninth session, device call S: the issue's tp 4 sweep of Qwen3-Next-80B-A3B (s37's call A,
# only on the bars' H200) over out/s39/all.ktdb.xz, built at this session's templates with PF 5
# (`./tune --modelpath models/qwen3-next-80b-a3b --tp 4 --target sm_90a --no-device`, code of
# non-ok kernels dropped). Carry out/bin out/lib out/device out/s39. $OUT/s1.tgz, the database beside.
DBX=out/s39/all.ktdb.xz N=${N:-s1} exec sh bench/results/2026-12-07-h200-s37/callA.sh
