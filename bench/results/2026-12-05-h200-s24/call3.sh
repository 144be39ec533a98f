#!/bin/sh
# Twenty-fourth session, device call 3 (issue 13's sweep): the twenty-second session's call 3 (./tune
# on Qwen3-Next-80B-A3B at --tp 4, gdn_decode then gdn_prefill, verified and timed; kt dump; the
# prefill checks and bench rows on the tuned paths) over out/c23's database (rebuilt this session:
# z a token ahead). Results: $OUT/g3.tgz. Carry out/bin out/lib out/device out/c23.
CARRY_DIR=out/c23 SWEEP_MIN=2 exec sh bench/results/2026-12-05-h200-s22/call3.sh
