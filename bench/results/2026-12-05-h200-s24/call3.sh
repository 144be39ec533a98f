#!/bin/sh
# Twenty-fourth session, device call 3 (issue 13's sweep): the twenty-second session's call 3 (./tune
# on Qwen3-Next-80B-A3B at --tp 4, gdn_decode then gdn_prefill, verified and timed; kt dump; the
# prefill checks and bench rows on the tuned paths) over out/c24's database (this session's decode
# and prefill). Results: $OUT/g3.tgz. Carry out/bin out/lib out/device out/c24.
CARRY_DIR=out/c24 SWEEP_MIN=2 exec sh bench/results/2026-12-05-h200-s22/call3.sh
