#!/bin/sh
# build_carry.sh (twenty-fifth session): here, before call7.sh: the session's last templates built
# into out/c31 (every sm_90a gdn_decode kernel, every bf16 gdn_prefill kernel, the pack's tools).
CARRY_DIR=out/c31 exec sh "$(dirname "$0")/../2026-12-05-h200-s23/build_carry.sh"
