#!/usr/bin/env python3
"""hbase-model.py MNT TABLE SEED OPS: drives table TABLE of a cellfs mount
with OPS random HBase operations (cell files, .batch verbs, counters,
appends of several columns, flush and major compaction) and compares
every read (cells, versions, scans forward and reversed) with an in-memory
model of the engine's semantics (docs/engine.md "Versions and deletes":
HBase with NEW_VERSION_BEHAVIOR, a delete masks only what was written
before it).  Prints one line per mismatch and exits 1 on the first; 0
when every read agreed.  The table must exist with the schema SCHEMA.

The model keeps, per column, the puts that are still alive (a dead put
never comes back).  A put dies when a delete written after it covers it,
when the same version is written again, or once VERSIONS puts with a
higher timestamp are alive together.  Explicit timestamps are small
(1000..6000), so a delete "at now" covers every one of them; counters
live in family c, whose versions (at now) are compared by value only;
so do the columns c:x, c:y, d:x, d:y that multi-column appends (at now)
write, checked through a scan of them that must show all of one append
or none.

Family k has KEEP_DELETED_CELLS=TRUE: a read whose time range ends at or
before a delete's timestamp does not see that delete.  Its model keeps
the whole history (KdcModel, as tests/test-engine-model.c does) and
works out each put's death for the range read; its reads go through
`.scan/start=R&stop=R%00&column=k:Q&time=LO,HI&versions=N` (a row none
of whose cells a read without a range sees is not a directory), and
major compactions in between must change none of them.
"""
import errno
import os
import random
import sys

SCHEMA = ("f VERSIONS=3\ng VERSIONS=2\nc VERSIONS=1\nd VERSIONS=1\n"
          "k VERSIONS=2 KEEP_DELETED_CELLS=TRUE\n")
VERSIONS = {"f": 3, "g": 2, "c": 1, "d": 1}
APPEND_COLS = ["c:x", "c:y", "d:x", "d:y"]
ROWS = ["r0", "r1", "r2"]
QUALS = ["a", "b"]
TSS = [1000, 2000, 3000, 4000, 5000, 6000]
VALS = ["v1", "v2", "v3", "xx", "yy"]
# HBase's CompareOperator on (value given) vs (cell): the comparison's sign
CMP = {"=": lambda d: d == 0, "!=": lambda d: d != 0,
       "LESS": lambda d: d < 0, "<=": lambda d: d <= 0,
       ">": lambda d: d > 0, "GREATER_OR_EQUAL": lambda d: d >= 0}


class Model:
    def __init__(self):
        # (row, fam, qual) -> list of [ts, value] alive
        self.cols = {}

    def alive(self, row, fam, qual):
        return sorted(self.cols.get((row, fam, qual), []), key=lambda p: -p[0])

    def put(self, row, fam, qual, ts, val):
        col = self.cols.setdefault((row, fam, qual), [])
        col[:] = [p for p in col if p[0] != ts]
        col.append([ts, val])
        self.trim(row, fam, qual)

    def trim(self, row, fam, qual):
        col = self.alive(row, fam, qual)
        self.cols[(row, fam, qual)] = col[:VERSIONS[fam]]

    def columns(self, row=None, fam=None):
        return [k for k in self.cols if (row is None or k[0] == row) and
                (fam is None or k[1] == fam)]

    def kill(self, key, pred):
        self.cols[key] = [p for p in self.cols.get(key, []) if not pred(p)]

    def latest(self, row, fam, qual):
        a = self.alive(row, fam, qual)
        return a[0] if a else None

    def cells(self):
        out = []
        for (row, fam, qual) in sorted(self.cols):
            for p in self.alive(row, fam, qual):
                out.append((row, fam, qual, p[0], p[1]))
        return out


NOW = 10 ** 13  # a delete "at now": past every explicit timestamp
PUT, DEL, DELCOL, DELFAM = range(4)


class KdcModel:
    """The history of family k (VERSIONS 2, KEEP_DELETED_CELLS=TRUE)."""

    def __init__(self, versions):
        self.versions = versions
        self.ev = []  # [seq, row, qual, ts, type, value]
        self.seq = 0

    def add(self, row, qual, ts, typ, val=None):
        self.seq += 1
        self.ev.append((self.seq, row, qual, ts, typ, val))

    @staticmethod
    def covers(d, p, hi):
        """does delete d cover put p for a read ending at hi (None: no
        range)?  such a read ignores the deletes of timestamp >= hi"""
        if d[1] != p[1] or d[0] <= p[0] or d[4] == PUT:
            return False
        if hi is not None and d[3] >= hi:
            return False
        if d[4] == DELFAM:
            return d[3] >= p[3]
        if d[2] != p[2]:
            return False
        return d[3] == p[3] if d[4] == DEL else d[3] >= p[3]

    def column(self, row, qual, lo=0, hi=None):
        """the visible puts of k:qual in [lo, hi), newest first"""
        ps = sorted((e for e in self.ev if e[4] == PUT and e[1] == row and
                     e[2] == qual), key=lambda e: (-e[3], -e[0]))
        death, out = [], []
        for i, p in enumerate(ps):
            d = min([e[0] for e in self.ev if self.covers(e, p, hi)] +
                    [e[0] for e in ps if e[3] == p[3] and e[0] > p[0]] +
                    [float("inf")])
            # crowded out: VERSIONS newer puts alive at once, at a birth
            for t in sorted({p[0]} | {q[0] for q in ps[:i] if q[0] > p[0]}):
                if t >= d:
                    break
                if sum(1 for k, q in enumerate(ps[:i]) if q[3] > p[3] and
                       q[0] <= t and death[k] > t) >= self.versions:
                    d = t
                    break
            death.append(d)
            if d == float("inf") and p[3] >= lo and (hi is None or p[3] < hi):
                out.append(p)
        return out

    def latest(self, row, qual):
        c = self.column(row, qual)
        return c[0] if c else None


class Mismatch(Exception):
    pass


def run(mnt, table, seed, nops):
    rnd = random.Random(seed)
    t = os.path.join(mnt, table)
    m = Model()
    km = KdcModel(2)
    counters = {}  # (row, qual) -> int
    appended = {}  # (row, "fam:qual") -> str, of APPEND_COLS
    log = []

    def batch(text):
        fd = os.open(os.path.join(t, ".batch"), os.O_WRONLY)
        try:
            os.write(fd, text.encode())
            return 0
        except OSError as e:
            return e.errno
        finally:
            os.close(fd)

    def read(path):
        try:
            with open(os.path.join(t, path), "rb") as f:
                return f.read().decode()
        except OSError as e:
            return e.errno

    def expect(what, got, want):
        if got != want:
            if os.environ.get("HBASE_MODEL_LOG"):
                sys.stderr.write("\n".join(log) + "\n")
            raise Mismatch("%s: got %r, model %r (after %s)" %
                           (what, got, want, "; ".join(log[-6:])))

    def only_fg(got):
        if not isinstance(got, str):
            return got
        return "".join(l for l in got.splitlines(True)
                       if " c:" not in l and " d:" not in l and
                       " k:" not in l)

    def by_row(lines, reverse):
        """lines of rows in key order -> rows reversed, a row's lines
        kept in their order (HBase's reversed scan)"""
        if not reverse:
            return "".join(lines)
        rows = []
        for l in lines:
            if rows and rows[-1][0].split(" ", 1)[0] == l.split(" ", 1)[0]:
                rows[-1].append(l)
            else:
                rows.append([l])
        return "".join("".join(r) for r in reversed(rows))

    def check_scan():
        want = []
        for (row, fam, qual, ts, val) in m.cells():
            if fam in ("c", "d"):
                continue
            want.append("%s %s:%s %d %s\n" % (row, fam, qual, ts, val))
        rev = rnd.random() < 0.5
        q = "versions=9&reversed" if rev else "versions=9"
        expect("scan " + q, only_fg(read(".scan/" + q)), by_row(want, rev))

    def check_cell(row, fam, qual):
        lt = m.latest(row, fam, qual)
        got = read("%s/%s:%s" % (row, fam, qual))
        expect("cat %s/%s:%s" % (row, fam, qual), got,
               lt[1] if lt else errno.ENOENT)
        n = rnd.randint(1, 4)
        lo = rnd.choice([0] + TSS)
        hi = rnd.choice([x for x in TSS + [9000] if x > lo])
        vs = [p for p in m.alive(row, fam, qual) if lo <= p[0] < hi][:n]
        got = read("%s/%s:%s@%d,%d,v=%d" % (row, fam, qual, lo, hi, n))
        expect("versions %s/%s:%s@%d,%d,v=%d" % (row, fam, qual, lo, hi, n),
               got, "".join("%d %s\n" % (p[0], p[1]) for p in vs)
               if vs else errno.ENOENT)
        got = read("%s/%s:%s@%d,%d" % (row, fam, qual, lo, hi))
        expect("range %s/%s:%s@%d,%d" % (row, fam, qual, lo, hi), got,
               vs[0][1] if vs else errno.ENOENT)

    def check_kdc(row, qual):
        """k:qual of row in a time range (often ending at a delete's
        timestamp, where a read starts or stops seeing it) and without"""
        marks = [e[3] for e in km.ev if e[4] != PUT and e[1] == row and
                 e[3] < NOW]
        if marks and rnd.random() < 0.6:
            hi = rnd.choice(marks) + rnd.choice([-1000, 0, 1, 1000])
        else:
            hi = rnd.choice(TSS + [9000])
        lo = max(rnd.choice([0, 0, hi - 2000]), 0)
        hi = max(hi, lo + 1)
        n = rnd.randint(1, 3)
        for rng in ([lo, hi], None):
            vs = km.column(row, qual, *(rng or [0]))[:n]
            q = "start=%s&stop=%s%%00&column=k:%s&versions=%d" % (
                row, row, qual, n)
            if rng:
                q += "&time=%d,%d" % tuple(rng)
            expect("kdc scan " + q, read(".scan/" + q),
                   "".join("%s k:%s %d %s\n" % (row, qual, p[3], p[5])
                           for p in vs))

    def deleteall(row, ts):
        """the model of `deleteall ROW [@TS]` (ts None: at now): a
        DeleteFamily marker in every family"""
        km.add(row, None, NOW if ts is None else ts, DELFAM)
        for k in m.columns(row):
            m.kill(k, (lambda p: True) if ts is None else
                   (lambda p: p[0] <= ts))
        if ts is None:
            for k in [k for k in counters if k[0] == row]:
                del counters[k]
            for k in [k for k in appended if k[0] == row]:
                del appended[k]

    def check_counter(row, q):
        got = read("%s/c:%s@counter" % (row, q))
        want = counters.get((row, q))
        expect("counter %s/c:%s" % (row, q), got,
               "%d\n" % want if want is not None else errno.ENOENT)

    def check_appended(row):
        got = read(".scan/prefix=%s&column=c:x&column=c:y&column=d:x"
                   "&column=d:y" % row)
        if isinstance(got, str):
            got = "".join(" ".join(l.split(" ")[i] for i in (0, 1, 3))
                          for l in got.splitlines(True))
        want = "".join("%s %s %s\n" % (row, c, appended[(row, c)])
                       for c in APPEND_COLS if (row, c) in appended)
        expect("appended columns of " + row, got, want)

    def check_filtered():
        ts = rnd.choice(TSS)
        val = rnd.choice(VALS)
        lim = rnd.randint(1, 3)
        q = rnd.choice(["ts=%d&versions=9" % ts, "value=%s&versions=9" % val,
                        "column=f&versions=2", "time=2000,5000",
                        "prefix=r1&versions=9&column=g",
                        "reversed&start=r1&versions=9",
                        "reversed&start=r2&stop=r0&column=g",
                        "column=f&column=g&versions=9&reversed&limit=%d"
                        % lim,
                        # HBase's filter language (fs/filter.c)
                        "versions=9&filter=SingleColumnValueFilter("
                        "'f','a',=,'binary:%s')" % val,
                        "versions=9&filter=ValueFilter(>,'binary:%s') OR "
                        "TimestampsFilter(%d)" % (val, ts),
                        "versions=2&filter=TimestampsFilter(%d, %d)"
                        % (ts, ts + 1000),
                        "versions=9&filter=ColumnRangeFilter('a',false,'b',"
                        "true) AND FamilyFilter(=,'binary:g')",
                        "versions=9&filter=RowFilter(<=,'binary:r1') AND "
                        "ValueFilter(=,'substring:V')"])
        rev = "reversed" in q
        if not rev and rnd.random() < 0.3:
            q += "&reversed"
            rev = True
        got = read(".scan/" + q)
        want = []
        for (row, fam, qual) in sorted(m.cols):
            if fam in ("c", "d"):
                continue
            vs = m.alive(row, fam, qual)
            if q.startswith("ts="):
                vs = [p for p in vs if p[0] == ts]
            elif q.startswith("value="):
                vs = [p for p in vs if p[1] == val]
            elif q.startswith("column=f&versions=2"):
                vs = vs[:2] if fam == "f" else []
            elif q.startswith("time="):
                vs = [p for p in vs if 2000 <= p[0] < 5000][:1]
            elif q.startswith("prefix="):
                vs = vs if row == "r1" and fam == "g" else []
            elif q.startswith("reversed&start=r1"):
                vs = vs if row <= "r1" else []
            elif q.startswith("reversed&start=r2"):
                vs = vs[:1] if "r0" < row <= "r2" and fam == "g" else []
            elif "SingleColumnValueFilter" in q:
                # the row's newest f:a decides; a row without it passes
                lt = m.latest(row, "f", "a")
                vs = vs if lt is None or lt[1] == val else []
            elif "ValueFilter(>" in q:
                vs = [p for p in vs if p[1] > val or p[0] == ts]
            elif "TimestampsFilter(" in q:
                vs = [p for p in vs if p[0] in (ts, ts + 1000)][:2]
            elif "ColumnRangeFilter" in q:
                vs = vs if qual == "b" and fam == "g" else []
            elif "RowFilter" in q:
                vs = [p for p in vs if row <= "r1" and "v" in p[1].lower()]
            want += ["%s %s:%s %d %s\n" % (row, fam, qual, p[0], p[1])
                     for p in vs]
        want = by_row(want, rev)
        if "limit=" in q:
            keep = sorted({l.split(" ", 1)[0] for l in
                           want.splitlines()}, reverse=True)[:lim]
            want = "".join(l for l in want.splitlines(True)
                           if l.split(" ", 1)[0] in keep)
        expect("scan " + q, only_fg(got), want)

    for i in range(nops):
        row = rnd.choice(ROWS)
        fam = rnd.choice(["f", "g"])
        qual = rnd.choice(QUALS)
        ts = rnd.choice(TSS)
        val = rnd.choice(VALS)
        op = rnd.randrange(25)
        if op <= 3:
            log.append("put %s %s:%s@%d %s" % (row, fam, qual, ts, val))
            if op <= 1:
                try:
                    os.mkdir(os.path.join(t, row))
                except FileExistsError:
                    pass
                with open(os.path.join(t, row, "%s:%s@%d" % (fam, qual, ts)),
                          "w") as f:
                    f.write(val)
                rc = 0
            else:
                rc = batch("put %s %s:%s@%d %s\n" % (row, fam, qual, ts, val))
            expect("put", rc, 0)
            m.put(row, fam, qual, ts, val)
        elif op == 4:
            log.append("rm %s/%s:%s" % (row, fam, qual))
            try:
                os.unlink(os.path.join(t, row, "%s:%s" % (fam, qual)))
            except OSError:
                pass
            m.kill((row, fam, qual), lambda p: True)
        elif op == 5:
            log.append("rm %s/%s:%s@%d" % (row, fam, qual, ts))
            try:
                os.unlink(os.path.join(t, row, "%s:%s@%d" % (fam, qual, ts)))
            except OSError:
                pass
            m.kill((row, fam, qual), lambda p: p[0] == ts)
        elif op == 6:
            latest = rnd.random() < 0.5
            line = "deletecolumn %s %s:%s%s" % (row, fam, qual,
                                                "" if latest else "@%d" % ts)
            log.append(line)
            expect(line, batch(line + "\n"), 0)
            lt = m.latest(row, fam, qual)
            if latest and lt:
                m.kill((row, fam, qual), lambda p: p[0] == lt[0])
            elif not latest:
                m.kill((row, fam, qual), lambda p: p[0] == ts)
        elif op == 7:
            line = "deletecolumns %s %s:%s@%d" % (row, fam, qual, ts)
            log.append(line)
            expect(line, batch(line + "\n"), 0)
            m.kill((row, fam, qual), lambda p: p[0] <= ts)
        elif op == 8:
            line = "deletefamily %s %s@%d" % (row, fam, ts)
            log.append(line)
            expect(line, batch(line + "\n"), 0)
            for k in m.columns(row, fam):
                m.kill(k, lambda p: p[0] <= ts)
        elif op == 9:
            line = "deletefamilyversion %s %s@%d" % (row, fam, ts)
            log.append(line)
            expect(line, batch(line + "\n"), 0)
            for k in m.columns(row, fam):
                m.kill(k, lambda p: p[0] == ts)
        elif op == 10:
            now = rnd.random() < 0.2
            line = "deleteall %s" % row if now else \
                "deleteall %s @%d" % (row, ts)
            log.append(line)
            expect(line, batch(line + "\n"), 0)
            deleteall(row, None if now else ts)
        elif op == 11:
            q = rnd.choice(QUALS)
            d = rnd.randint(-5, 9)
            how = rnd.random()
            if how < 0.3:
                line = "incr %s c:%s %d" % (row, q, d)
                log.append(line)
                expect(line, batch(line + "\n"), 0)
            elif how < 0.6:
                # several columns, one perhaps twice: the last delta
                # named of a column counts (HBase's Increment)
                cols = [(rnd.choice(QUALS), rnd.randint(-5, 9))
                        for _ in range(rnd.randint(2, 4))]
                line = "incr %s %s" % (row, " ".join(
                    "c:%s %d" % c for c in cols))
                log.append(line)
                expect(line, batch(line + "\n"), 0)
                for cq, cd in dict(cols).items():
                    counters[(row, cq)] = counters.get((row, cq), 0) + cd
                d = None
            else:
                log.append("echo %d >> %s/c:%s@counter" % (d, row, q))
                try:
                    os.mkdir(os.path.join(t, row))
                except FileExistsError:
                    pass
                with open(os.path.join(t, row, "c:%s@counter" % q), "a") as f:
                    f.write("%d\n" % d)
            if d is not None:
                counters[(row, q)] = counters.get((row, q), 0) + d
        elif op == 12:
            lt = m.latest(row, fam, qual)
            exp = rnd.choice([lt[1] if lt else "@none", val, "@none"])
            target = rnd.choice(QUALS)
            line = "checkandput %s %s:%s %s %s:%s@%d %s" % (
                row, fam, qual, exp, fam, target, ts, val + "c")
            log.append(line)
            ok = (exp == "@none" and lt is None) or (lt and lt[1] == exp)
            expect(line, batch(line + "\n"), 0 if ok else errno.ECANCELED)
            if ok:
                m.put(row, fam, target, ts, val + "c")
        elif op == 13:
            lt = m.latest(row, fam, qual)
            exp = rnd.choice([lt[1] if lt else "@none", val])
            target = rnd.choice(QUALS)
            line = "checkanddelete %s %s:%s %s %s:%s@%d" % (
                row, fam, qual, exp, fam, target, ts)
            log.append(line)
            ok = (exp == "@none" and lt is None) or (lt and lt[1] == exp)
            expect(line, batch(line + "\n"), 0 if ok else errno.ECANCELED)
            if ok:
                m.kill((row, fam, target), lambda p: p[0] <= ts)
        elif op == 14:
            lt = m.latest(row, fam, qual)
            exp = lt[1] if lt and rnd.random() < 0.7 else val
            lines = ["ifequals %s %s:%s %s" % (row, fam, qual, exp),
                     "put %s f:a@%d %s" % (row, ts, val + "m"),
                     "deletecolumns %s g:b@%d" % (row, ts),
                     "put %s g:a@%d %s" % (row, ts, val + "n")]
            log.append(" / ".join(lines))
            ok = lt is not None and lt[1] == exp
            expect(lines[0], batch("\n".join(lines) + "\n"),
                   0 if ok else errno.ECANCELED)
            if ok:
                m.put(row, "f", "a", ts, val + "m")
                m.kill((row, "g", "b"), lambda p: p[0] <= ts)
                m.put(row, "g", "a", ts, val + "n")
        elif op == 15:
            # a bad line: nothing of the write applies
            line = "put %s %s:%s@%d %s\ndeletefamily %s %s:x\n" % (
                row, fam, qual, ts, val, row, fam)
            log.append("bad batch")
            expect("bad batch", batch(line), errno.EINVAL)
        elif op == 17:
            # HBase Append of several columns of one row, atomic
            cols = [rnd.choice(APPEND_COLS)
                    for _ in range(rnd.randint(1, 4))]
            vals = [rnd.choice(VALS) for _ in cols]
            line = "append %s %s" % (row, " ".join(
                "%s %s" % cv for cv in zip(cols, vals)))
            log.append(line)
            expect(line, batch(line + "\n"), 0)
            # a column named again takes the last value named (HBase
            # computes each from the value read before the Append)
            last = dict(zip(cols, vals))
            for c, v in last.items():
                appended[(row, c)] = appended.get((row, c), "") + v
            check_appended(row)
        elif op == 18:
            # CheckAndMutate: HBase's compare operators (the value given
            # on the left) on the newest version in a time range, or a
            # ValueFilter that any version of the row may pass
            lo, hi = 0, None
            shape = rnd.randrange(5)
            if shape == 1:
                lo, hi = sorted(rnd.sample(TSS + [7000], 2))
                rng = "@%d,%d" % (lo, hi)
            elif shape == 2:
                lo = rnd.choice(TSS)
                hi = lo + 1
                rng = "@%d" % lo
            elif shape == 3:
                lo = rnd.choice(TSS)
                rng = "@%d," % lo
            elif shape == 4:
                hi = rnd.choice(TSS)
                rng = "@,%d" % hi
            else:
                rng = ""
            vs = [p for p in m.alive(row, fam, qual)
                  if p[0] >= lo and (hi is None or p[0] < hi)]
            cur = vs[0][1] if vs else None
            exp = cur if cur and rnd.random() < 0.4 else rnd.choice(VALS)
            body = "put %s f:b@%d %s" % (row, ts, val + "o")
            if rnd.random() < 0.3:
                line = "iffilter %s ValueFilter(=, 'binary:%s')" % (row, exp)
                seen = [p[1] for (r, f_, q_) in m.columns(row)
                        for p in m.alive(r, f_, q_)]
                seen += [v for (r, c), v in appended.items() if r == row]
                seen += [p[5] for q in QUALS for p in km.column(row, q)]
                ok = exp in seen
            else:
                name = rnd.choice(sorted(CMP))
                line = "ifmatches %s %s:%s%s %s %s" % (row, fam, qual, rng,
                                                      name, exp)
                ok = cur is not None and CMP[name]((exp > cur) - (exp < cur))
            log.append(line + " / " + body)
            expect(line, batch(line + "\n" + body + "\n"),
                   0 if ok else errno.ECANCELED)
            if ok:
                m.put(row, "f", "b", ts, val + "o")
        elif op >= 19:
            # family k: puts and every kind of delete, at a timestamp
            # and at now
            kind = rnd.choice(["put", "put", "put", "deletecolumn",
                               "deletecolumn@", "deletecolumns",
                               "deletefamily", "deletefamilyversion",
                               "deleteall@", "deleteall", "flush",
                               "major_compact"])
            if kind in ("flush", "major_compact"):
                # a major compaction keeps what some read of some time
                # range needs: every row's k, in ranges around markers
                log.append(kind)
                with open(os.path.join(t, ".ctl"), "w") as f:
                    f.write(kind + "\n")
                for r in ROWS:
                    for q in QUALS:
                        check_kdc(r, q)
                        check_kdc(r, q)
                continue
            if kind == "put":
                line = "put %s k:%s@%d %s" % (row, qual, ts, val)
                km.add(row, qual, ts, PUT, val)
            elif kind == "deletecolumn":
                # the latest version, read under the row's lock
                line = "deletecolumn %s k:%s" % (row, qual)
                lt = km.latest(row, qual)
                if lt:
                    km.add(row, qual, lt[3], DEL)
            elif kind == "deletecolumn@":
                line = "deletecolumn %s k:%s@%d" % (row, qual, ts)
                km.add(row, qual, ts, DEL)
            elif kind == "deletecolumns":
                line = "deletecolumns %s k:%s@%d" % (row, qual, ts)
                km.add(row, qual, ts, DELCOL)
            elif kind == "deletefamily":
                line = "deletefamily %s k@%d" % (row, ts)
                km.add(row, None, ts, DELFAM)
            elif kind == "deletefamilyversion":
                line = "deletefamilyversion %s k@%d" % (row, ts)
                # a Delete of that version of each column a read of
                # [ts, ts + 1) sees (fs/batch.c, family_version)
                for q in [q for q in QUALS if km.column(row, q, ts, ts + 1)]:
                    km.add(row, q, ts, DEL)
            elif kind == "deleteall@":
                line = "deleteall %s @%d" % (row, ts)
                deleteall(row, ts)
            else:
                line = "deleteall %s" % row
                deleteall(row, None)
            log.append(line)
            expect(line, batch(line + "\n"), 0)
        elif op == 16 and rnd.random() < 0.3:
            w = rnd.choice(["flush", "major_compact", "compact"])
            log.append(w)
            with open(os.path.join(t, ".ctl"), "w") as f:
                f.write(w + "\n")
        # reads after every operation
        check_cell(row, fam, qual)
        check_cell(rnd.choice(ROWS), rnd.choice(["f", "g"]),
                   rnd.choice(QUALS))
        check_counter(row, rnd.choice(QUALS))
        check_kdc(row, rnd.choice(QUALS))
        if i % 5 == 0:
            check_scan()
        if i % 7 == 0:
            check_filtered()
    check_scan()
    for row in ROWS:
        for q in QUALS:
            check_kdc(row, q)
        check_appended(row)
        for q in QUALS:
            check_counter(row, q)


def main():
    mnt, table, seed, nops = sys.argv[1], sys.argv[2], int(sys.argv[3]), \
        int(sys.argv[4])
    if len(sys.argv) > 5 and sys.argv[5] == "--schema":
        sys.stdout.write(SCHEMA)
        return 0
    try:
        run(mnt, table, seed, nops)
    except Mismatch as e:
        print("seed %d: %s" % (seed, e))
        return 1
    print("seed %d: %d operations, every read agreed" % (seed, nops))
    return 0


if __name__ == "__main__":
    sys.exit(main())
