#!/bin/sh
# build_carry.sh (twenty-sixth session): here, before call1.sh: this session's templates built into
# out/c32 (every sm_90a gdn_decode kernel, the split norm's forms among them; every bf16 gdn_prefill
# kernel, as the twenty-fifth session left it; the pack's tools).
CARRY_DIR=out/c32 exec sh "$(dirname "$0")/../2026-12-05-h200-s23/build_carry.sh"
