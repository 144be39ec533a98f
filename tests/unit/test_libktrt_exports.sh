#!/bin/sh
# test_libktrt_exports.sh: libktrt.so exports ktrt.h's functions and nothing else, and needs no
# GPU library, LuaJIT or cJSON at link time (the serving image links it alone).
set -u
cd "$(dirname "$0")/../.."
lib=out/lib/libktrt.so
got=$(nm -D --defined-only "$lib" | awk '{print $3}' | sort | tr '\n' ' ')
want="ktrt_choose ktrt_choose_gemm ktrt_close ktrt_device_key ktrt_gemm ktrt_get_stats ktrt_open ktrt_run "
if [ "$got" != "$want" ]; then echo "libktrt exports: got '$got', want '$want'"; exit 1; fi
if ldd "$lib" | grep -E -i 'luajit|cjson|libcuda|amdhip'; then echo "libktrt links a library it must not"; exit 1; fi
echo "libktrt.so: exports exactly ktrt.h's 8 functions; links $(ldd "$lib" | awk '{print $1}' | grep -v -e vdso -e ld-linux | tr '\n' ' ')"
