#!/bin/sh
# Thirty-ninth session, device call T (~5 minutes, any card): PF 5, the state pass's step folded into
# one product (out/s39/x39f.ktdb.xz: bf16 BT 64 BV 16 NW 8 PF 5, both layouts) against main's PF 4
# (x38g), each launch's device time, the same rounds; gdn_prefill_check through libktrt on g39
# (the decode recipe and x39f's prefill: the prefill-then-decode chains with PF 5); then s38's
# call R (the split exchange, x38f, against x38g). Carry out/lib out/device out/s39. $OUT/t1.tgz.
set -u
. tests/device/env.sh
call_begin ${N:-t1}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
for d in x39f x38f x38g g39; do xz -dc out/s39/$d.ktdb.xz > $W/$d.ktdb; done
prefill_ab x39f x38g "${ROWS:-1x16384/8,1x65536/8,1x16384/16,8x2048/8,1x4096/8}"
prefill_check g39
prefill_ab x38f x38g "1x16384/8,1x16384/16"
call_end ${N:-t1}
