#!/bin/sh
# build_carry.sh (twenty-fourth session): here, before call2.sh, call3.sh and call4.sh: the
# twenty-third session's build into out/c24 (every sm_90a gdn_decode kernel and every bf16
# gdn_prefill kernel of this session's templates, and the tools of call 3).
CARRY_DIR=out/c24 exec sh "$(dirname "$0")/../2026-12-05-h200-s23/build_carry.sh"
