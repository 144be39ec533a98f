#!/bin/sh
# test_tune_ffi.sh: tune.lua's FFI declarations of the structs it passes to libkt (kt_gen_options,
# kt_tune_options) name the same fields, of the same types, in the same order as the C headers
# (build/pipeline.h, tuner/tune.h). A field the Lua side lacks is read by C past the end of what
# LuaJIT allocated: kt_gen_options.sample did so once and built 43 of 154 variants.
set -u
cd "$(dirname "$0")/../.."
# fields of `typedef struct NAME { ... } NAME;` in FILE, one "type name" a line, comments dropped
fields() {
    awk -v n="$1" '
        $0 ~ "typedef struct " n " \\{" { on = 1; next }
        on && $0 ~ "^\\} *" n ";" { exit }
        on { print }' "$2" |
    { case "$2" in *.lua) sed -e 's|--.*||' ;; *) cat ;; esac; } | tr '\n' ' ' | sed -e 's|/\*[^*]*\*\+\([^/*][^*]*\*\+\)*/||g' | tr ';' '\n' |
    awk '{
        # "const char *a, *b" / "int a, b": one line a declarator
        line = $0; gsub(/\*/, " * ", line); n = split(line, w, /[ \t,]+/)
        type = ""; i = 1
        while (i <= n && w[i] == "") i++
        # the type: words up to the first declarator (a word followed by "," or the end)
        split(line, parts, ",")
        first = parts[1]; gsub(/^[ \t]+|[ \t]+$/, "", first)
        m = split(first, fw, /[ \t]+/)
        if (m < 2) next
        base = ""; for (k = 1; k < m; k++) if (fw[k] != "*") base = base (base ? " " : "") fw[k]
        ptr = (fw[m - 1] == "*") ? "*" : ""
        print base ptr " " fw[m]
        for (p = 2; p in parts; p++) {
            d = parts[p]; gsub(/^[ \t]+|[ \t]+$/, "", d); q = ""
            if (d ~ /^\*/) { q = "*"; sub(/^\* */, "", d) }
            print base q " " d
        }
    }'
}
failed=0
check() {  # check STRUCT HEADER
    c=$(fields "$1" "$2"); l=$(fields "$1" tune.lua)
    if [ -z "$c" ] || [ "$c" != "$l" ]; then
        failed=$((failed + 1))
        echo "test_tune_ffi: $1: tune.lua's fields differ from $2's"
        echo "  C:   $(echo "$c" | tr '\n' ';')"
        echo "  Lua: $(echo "$l" | tr '\n' ';')"
    else
        echo "test_tune_ffi: $1: $(echo "$c" | wc -l) fields agree with $2"
    fi
}
check kt_gen_options build/pipeline.h
check kt_tune_options tuner/tune.h
[ "$failed" = 0 ]
