#!/bin/sh
# test_law_replay.sh: bench/law_replay replays the op's own law on a sweep's timings. A database
# of two attn_decode keys, each with a ring and a register-form candidate: at d256 and one 16-row
# tile the law passes the ring over (decode's law in runtime/op_attn.c), so the faster ring is the
# regret: 100 / 80 us on the fitted key (+25%), and a held-out key where the law's pick is the
# fastest (0%). A candidate whose params do not parse is skipped by name; an unknown op, a
# database without the op's keys and one without the target's device are refused.
set -u
cd "$(dirname "$0")/../.."
DIR=${KT_TEST_DIR:-out/test}/law_replay
rm -rf "$DIR" && mkdir -p "$DIR"
DB=$DIR/sweep.ktdb
failed=0
fail() { echo "test_law_replay: $*"; failed=1; }
K='attn_decode bf16 d=256 g=8 hkv=2 bs=16 win=0 cap=0 sink=0 q<=1 batch<=8 ctx<=32768'
H='attn_decode bf16 d=256 g=8 hkv=2 bs=16 win=0 cap=0 sink=0 q<=1 batch<=32 ctx<=32768'
P='"dtype":"bf16","D":256,"MT":1,"NW":4,"SEGMAX":128,"RE":1,"KD":0,"law":"decode"'
sqlite3 "$DB" "
CREATE TABLE device (key TEXT, target TEXT, compute_units INTEGER);
CREATE TABLE kernel (name TEXT, target TEXT, template TEXT, params TEXT, status TEXT, threads INTEGER,
                     regs INTEGER, lds_bytes INTEGER, waves_per_simd INTEGER, code_hash TEXT);
CREATE TABLE measurement (id INTEGER PRIMARY KEY, problem_key TEXT, code_hash TEXT, kernel TEXT, kind TEXT,
                          status TEXT, median_us REAL);
INSERT INTO device VALUES ('sm_90/132', 'sm_90a', 132);
INSERT INTO kernel VALUES ('ring', 'sm_90a', 'attn/decode.hip', '{$P,\"BN\":16,\"ST\":2}', 'ok', 128, 123, 49360, 16, 'h1');
INSERT INTO kernel VALUES ('regs', 'sm_90a', 'attn/decode.hip', '{$P,\"BN\":32,\"ST\":1}', 'ok', 128, 214, 31936, 8, 'h2');
INSERT INTO kernel VALUES ('broken', 'sm_90a', 'attn/decode.hip', '{\"dtype\":\"bf16\"}', 'ok', 128, 64, 1024, 8, 'h3');
INSERT INTO measurement VALUES (1, '$K', 'h1', 'ring', 'fine', 'ok', 90.0);
INSERT INTO measurement VALUES (2, '$K', 'h1', 'ring', 'coarse', 'ok', 80.0);
INSERT INTO measurement VALUES (3, '$K', 'h2', 'regs', 'coarse', 'ok', 100.0);
INSERT INTO measurement VALUES (4, '$K', 'h2', 'regs', 'fine', 'ok', 70.0);
INSERT INTO measurement VALUES (5, '$K', 'h3', 'broken', 'coarse', 'ok', 10.0);
INSERT INTO measurement VALUES (6, '$H', 'h1', 'ring', 'coarse', 'ok', 450.0);
INSERT INTO measurement VALUES (7, '$H', 'h2', 'regs', 'coarse', 'ok', 400.0);
INSERT INTO measurement VALUES (8, '$H', 'h2', 'regs', 'coarse', 'wrong', 1.0);" || fail "sqlite3 could not build $DB"
out=$(out/bin/law_replay --db "$DB" --op attn_decode --holdout 'batch<=32' 2>&1) || fail "exit $? on a good database: $out"
# a fine timing after a coarse one does not replace it: regs stays at 100 us on the first key
echo "$out" | grep -q "fitted *1 keys *pooled regret +25.00%" || fail "fitted key: want +25.00%: $out"
echo "$out" | grep -q "'batch<=32' *1 keys *pooled regret +0.00%" || fail "held-out key: want +0.00%: $out"
echo "$out" | grep -q "broken: .*(skipped)" || fail "the unparsable candidate is not named: $out"
echo "$out" | grep -q "+25.0%.*law regs" || fail "the worst key does not name the law's pick: $out"
out=$(out/bin/law_replay --db "$DB" --op no_such_op 2>&1) && fail "an unknown op was accepted"
echo "$out" | grep -q "no_such_op" || fail "the unknown op is not named: $out"
out=$(out/bin/law_replay --db "$DB" --op attn_prefill 2>&1) && fail "a database without attn_prefill keys passed"
echo "$out" | grep -q "no measured attn_prefill keys" || fail "no-keys message: $out"
out=$(out/bin/law_replay --db "$DB" --op attn_decode --target gfx1201 2>&1) && fail "a target without a device passed"
echo "$out" | grep -q "give --units" || fail "no-device message: $out"
[ "$failed" = 0 ] && echo "test_law_replay: law replay, held-out split, refusals: ok"
exit $failed
