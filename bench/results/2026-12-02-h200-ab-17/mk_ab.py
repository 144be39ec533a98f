#!/usr/bin/env python3
# mk_ab.py ROOT OUT.lua NAMES...: ROOT/templates/attn/decode.lua restricted to the named variants
import sys, re
root, out, names = sys.argv[1], sys.argv[2], sys.argv[3:]
src = open(root + '/templates/attn/' + ('decode_ws.lua' if 'ws' in out else 'decode.lua')).read()
allow = ',\n'.join('  ["%s"] = true' % n for n in names)
fmt = ('local key = string.format("%s_d%d_mt%d_bn%d_nw%d_segmax%d_re%d_kd%d_st%d", p.dtype, p.D, p.MT, p.BN, p.NW, p.SEGMAX, p.RE, p.KD, p.ST)\n'
       '    if not ALLOW[key] then return false, "not in the A/B set" end\n')
src = src.replace('  constraint = function(p, t)\n', '  constraint = function(p, t)\n    ' + fmt, 1)
src = src.replace('return {\n  family', 'local ALLOW = {\n' + allow + '\n}\n\nreturn {\n  family', 1)
open(out, 'w').write(src)
