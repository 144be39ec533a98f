#!/bin/sh
# test_tune_refuse.sh: `tune --modelpath` reads and validates config.json before anything else: a
# refused model (unknown architecture; a tp that does not divide the heads) exits non-zero within
# a second with the model loader's message, builds nothing and creates no database.
# Each run is bounded (timeout 20 s) so a tune that builds first fails here instead of running on.
set -u
cd "$(dirname "$0")/../.."
DIR=${KT_TEST_DIR:-out/test}/tune_refuse
rm -rf "$DIR" && mkdir -p "$DIR/unknown-arch"
sed 's/LlamaForCausalLM/GPT2LMHeadModel/' models/llama-3.1-8b/config.json > "$DIR/unknown-arch/config.json"
export KT_CACHE="$DIR/cache"   # a build that starts anyway does not touch the shared cache
failed=0
# refused NAME MODEL TP EXPECTED-MESSAGE-PART
refused() {
    db=$DIR/$1.ktdb
    t0=$(date +%s%N)
    timeout 20 ./tune --modelpath "$2" --tp "$3" --target gfx1201 --db "$db" > "$DIR/$1.out" 2>&1
    rc=$?
    ms=$(( ($(date +%s%N) - t0) / 1000000 ))
    why=""
    [ "$rc" = 0 ] && why="$why exit 0;"
    [ "$rc" = 124 ] && why="$why still running after 20 s (killed);"
    [ "$ms" -ge 1000 ] && why="$why took ${ms} ms (>= 1000);"
    ls "$db"* > /dev/null 2>&1 && why="$why left $(ls "$db"* | tr '\n' ' ');"
    grep -q "^== .* on gfx1201" "$DIR/$1.out" && why="$why built kernels first;"
    grep -q -- "$4" "$DIR/$1.out" || why="$why no '$4' in the output;"
    if [ -z "$why" ]; then echo "  pass  $1: exit $rc in ${ms} ms, no database: $(grep -m1 'tune:' "$DIR/$1.out")"
    else failed=$((failed + 1)); echo "  FAIL  $1:$why"; tail -5 "$DIR/$1.out" | sed 's/^/        /'; fi
}
refused unknown-architecture "$DIR/unknown-arch" 1 "GPT2LMHeadModel"
refused tp-does-not-divide models/llama-3.1-8b 3 "32"
[ "$failed" = 0 ] && echo "tune refuses bad models first: 2 cases" && exit 0
exit 1
