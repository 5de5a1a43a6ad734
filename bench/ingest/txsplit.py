#!/usr/bin/env python3
"""Groups a Postgres statement log (log_statement = all, log_line_prefix
'%m [%p] v=%v x=%x db=%d ') by transaction (backend and virtual
transaction id) and counts the transactions of the benchmark's database
by their first two statements. Used by bench/ingest/statements.sh.

    python3 bench/ingest/txsplit.py /tmp/pgpriv.log [TOP]
"""
import collections
import re
import sys

DB = 'feedsvc_bench_ingest'
line_re = re.compile(r'^\S+ \S+ UTC \[(\d+)\] v=(\S+) x=\S+ db=(\S+) (\w+):  (.*)$')
entries, cur = [], None
for line in open(sys.argv[1], errors='replace'):
    m = line_re.match(line)
    if m:
        pid, vxid, db, level, msg = m.groups()
        cur = None
        if db != DB or level != 'LOG':
            continue
        s = re.match(r'(?:statement|execute [^:]*): (.*)$', msg)
        if s:
            cur = [pid, vxid, s.group(1)]
            entries.append(cur)
    elif cur is not None:  # a statement's continuation line
        cur[2] += ' ' + line.strip()

txs = collections.OrderedDict()
for pid, vxid, stmt in entries:
    txs.setdefault((pid, vxid), []).append(re.sub(r'\s+', ' ', stmt.strip()))

def signature(stmts):
    parts = [s[:70] for s in stmts
             if not re.match(r'(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE)\b', s, re.I)]
    return ' || '.join(parts[:2]) if parts else ' '.join(stmts)[:60]

counts = collections.Counter(signature(v) for v in txs.values())
print('transactions', sum(counts.values()))
for sig, n in counts.most_common(int(sys.argv[2]) if len(sys.argv) > 2 else 30):
    print(f'{n:6d}  {sig}')
