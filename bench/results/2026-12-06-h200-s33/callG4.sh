#!/bin/sh
# Thirty-third session, device call G4 (~30 s): gdn_check's vk 0 chains with only the MT 8 OB 2
# forms in the database (out/s33mt: tests/device/keep.py on s33, MT=8 OB=2 PS=0), so that every
# plain and speculative chain runs on them (call G3's check ran the law's MT 1 picks). The vk 1
# chains refuse (the model's build has no vk 1 form). Carry out/lib out/device out/s33mt. $OUT/g4.tgz.
set -u
. tests/device/env.sh
call_begin g4
unpack s33mt
decode_check s33mt
grep -E "^  (ok|FAIL)" "$R/check-s33mt.log" | grep vk0 | cut -c1-160
call_end g4
