#!/bin/sh
# embed.sh NAME FILE: print a C file defining `const char NAME[]` with FILE's bytes.
set -eu
name=$1; file=$2
printf '/* generated from %s by build/embed.sh */\nconst char %s[] = {\n' "$file" "$name"
od -An -v -tx1 "$file" | sed 's/ *\([0-9a-f][0-9a-f]\)/0x\1,/g'
printf '0x00 };\n'
