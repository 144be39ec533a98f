import re, sys, collections
txt = open(sys.argv[1]).read()
funcs = re.split(r'\n\s+Function : ', txt)
for f in funcs[1:]:
    name = f.split('\n')[0].strip()
    if name.endswith('_reduce'): continue
    ins = []
    for line in f.split('\n'):
        m = re.match(r'\s+/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;', line)
        if m: ins.append((int(m.group(1), 16), m.group(2).strip()))
    idx = {a: i for i, (a, _) in enumerate(ins)}
    def op(t):
        t = re.sub(r'^@!?P[T0-9]\s+', '', t)
        return t.split()[0].split('.')[0]
    print(name, 'total', len(ins))
    loops = []
    for i, (a, t) in enumerate(ins):
        m = re.search(r'BRA\s+(?:!?P\d,\s*)?0x([0-9a-f]+)', t)
        if m and int(m.group(1), 16) <= a:
            j = idx.get(int(m.group(1), 16))
            if j is None: continue
            body = ins[j:i + 1]
            loops.append((len(body), j, i, collections.Counter(op(x[1]) for x in body)))
    for n, j, i, c in sorted(loops, reverse=True)[:3]:
        print('  loop %d instrs [%d..%d]:' % (n, j, i), ' '.join('%s:%d' % kv for kv in c.most_common(24)))
