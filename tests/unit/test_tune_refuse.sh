#!/bin/sh
# test_tune_refuse.sh: `tune --modelpath` reads and validates config.json, --only and --shapes
# before anything else: a refused model (unknown architecture; a tp that does not divide the
# heads) or input (an op family that does not exist, a shapes entry without its op's dimension)
# exits non-zero within a second with a message naming it, builds nothing and creates no database.
# Each run is bounded (timeout 20 s) so a tune that builds first fails here instead of running on.
set -u
cd "$(dirname "$0")/../.."
DIR=${KT_TEST_DIR:-out/test}/tune_refuse
rm -rf "$DIR" && mkdir -p "$DIR/unknown-arch"
sed 's/LlamaForCausalLM/GPT2LMHeadModel/' models/llama-3.1-8b/config.json > "$DIR/unknown-arch/config.json"
export KT_CACHE="$DIR/cache"   # a build that starts anyway does not touch the shared cache
failed=0
# refused NAME MODEL TP EXPECTED-MESSAGE-PART [TUNE ARGS...]
refused() {
    name=$1 model=$2 tp=$3 want=$4
    shift 4
    db=$DIR/$name.ktdb
    t0=$(date +%s%N)
    timeout 20 ./tune --modelpath "$model" --tp "$tp" --target gfx1201 --db "$db" "$@" > "$DIR/$name.out" 2>&1
    rc=$?
    ms=$(( ($(date +%s%N) - t0) / 1000000 ))
    why=""
    [ "$rc" = 0 ] && why="$why exit 0;"
    [ "$rc" = 124 ] && why="$why still running after 20 s (killed);"
    [ "$ms" -ge 1000 ] && why="$why took ${ms} ms (>= 1000);"
    ls "$db"* > /dev/null 2>&1 && why="$why left $(ls "$db"* | tr '\n' ' ');"
    grep -q "^== .* on gfx1201" "$DIR/$name.out" && why="$why built kernels first;"
    grep -q -- "$want" "$DIR/$name.out" || why="$why no '$want' in the output;"
    if [ -z "$why" ]; then echo "  pass  $name: exit $rc in ${ms} ms, no database: $(grep -m1 'tune:' "$DIR/$name.out")"
    else failed=$((failed + 1)); echo "  FAIL  $name:$why"; tail -5 "$DIR/$name.out" | sed 's/^/        /'; fi
}
refused unknown-architecture "$DIR/unknown-arch" 1 "GPT2LMHeadModel"
refused tp-does-not-divide models/llama-3.1-8b 3 "32"
# the op families' own inputs: --only and --shapes name the op and the dimension at fault
refused unknown-op-family models/llama-3.1-8b 1 "'conv' is not an op family (known: gemm rmsnorm_add attn_decode" --only gemm,conv
printf '[{"op": "gemm", "n": 4096, "k": 4096}, {"op": "rmsnorm_add", "rows": 7}]' > "$DIR/shapes-missing.json"
refused shapes-missing-dimension models/llama-3.1-8b 1 "entry 1: rmsnorm_add needs a positive integer \"hidden\"" \
    --shapes "$DIR/shapes-missing.json"
printf '[{"op": "attention", "n": 1}]' > "$DIR/shapes-op.json"
refused shapes-unknown-op models/llama-3.1-8b 1 "entry 0: unknown op 'attention'" --shapes "$DIR/shapes-op.json"
[ "$failed" = 0 ] && echo "tune refuses bad models and inputs first: 5 cases" && exit 0
exit 1
