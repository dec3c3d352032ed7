#!/usr/bin/env python3
"""Summarizes a device timeline written by `solve_bench --trace FILE` (CSV:
kernel,queued_ns,start_ns,end_ns): the span from the first start to the last
end, the time the device was busy and idle in it, the idle gaps by size, and
the busy time per kernel name (largest first).

    python3 scripts/trace-summary.py trace.csv [--top 15] [--last-ms T]

`--last-ms T` keeps only the commands that start in the last T ms of the
span (e.g. the solve after its setup). Gaps of 2 µs or more are also
summed by the pair of commands around them (the one that ended before,
the one that started after): where the device waits, and for what.
"""
import csv
import sys
from collections import defaultdict


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    top, last_ms = 15, None
    if "--top" in args:
        i = args.index("--top")
        top = int(args[i + 1])
        del args[i : i + 2]
    if "--last-ms" in args:
        i = args.index("--last-ms")
        last_ms = float(args[i + 1])
        del args[i : i + 2]
    rows = []
    with open(args[0]) as f:
        for r in csv.DictReader(f):
            rows.append((r["kernel"], int(r["queued_ns"]), int(r["start_ns"]), int(r["end_ns"])))
    if not rows:
        sys.exit("empty trace")
    rows.sort(key=lambda r: r[2])
    if last_ms is not None:
        end = max(r[3] for r in rows)
        rows = [r for r in rows if r[2] >= end - last_ms * 1e6]
    span = rows[-1][3] - rows[0][2]
    busy, gaps, per = 0, [], defaultdict(lambda: [0, 0])
    pairs = defaultdict(lambda: [0, 0])
    last_end, last_name = rows[0][2], rows[0][0]
    for name, _, start, end in rows:
        if start > last_end:
            gaps.append(start - last_end)
            if start - last_end >= 2_000:
                pairs[(last_name, name)][0] += start - last_end
                pairs[(last_name, name)][1] += 1
        if end >= last_end:
            last_name = name
        busy += max(0, end - max(start, last_end))
        last_end = max(last_end, end)
        per[name][0] += end - start
        per[name][1] += 1
    ms = lambda ns: ns * 1e-6
    print(f"commands {len(rows)}, span {ms(span):.3f} ms, busy {ms(busy):.3f} ms "
          f"({100 * busy / max(span, 1):.1f} %), idle {ms(span - busy):.3f} ms in {len(gaps)} gaps")
    for lo, hi in [(0, 2_000), (2_000, 10_000), (10_000, 50_000), (50_000, 10**15)]:
        g = [x for x in gaps if lo <= x < hi]
        print(f"  gaps {lo / 1000:g}–{hi / 1000 if hi < 10**15 else float('inf'):g} µs: "
              f"{len(g)}, {ms(sum(g)):.3f} ms")
    print(f"{'kernel':<40} {'count':>7} {'ms':>9} {'µs each':>9}")
    for name, (t, n) in sorted(per.items(), key=lambda kv: -kv[1][0])[:top]:
        print(f"{name:<40} {n:>7} {ms(t):>9.3f} {t / n / 1000:>9.1f}")
    print(f"{'gaps ≥ 2 µs: before → after':<58} {'count':>7} {'ms':>9} {'µs each':>9}")
    for (a, b), (t, n) in sorted(pairs.items(), key=lambda kv: -kv[1][0])[:top]:
        print(f"{(a + ' → ' + b)[:58]:<58} {n:>7} {ms(t):>9.3f} {t / n / 1000:>9.1f}")


if __name__ == "__main__":
    main()
