#!/usr/bin/env python3
"""Print the parity table from the JSON lines of bench/parity (parity --json).

    python3 bench/parity/report.py parity.jsonl [--markdown]

One row per timed kernel: kernel, shape, Spindle ms, hand-written ms (each
the median of the interleaved, L2-flushed launches) and their ratio
(Spindle / hand-written: above 1, Spindle is slower). Rows above 1.03, the
goal of issue 20, are marked. Exit status 1 when any check in the input
failed (then some kernels were not timed).
"""
import json
import sys


def main(argv):
    markdown = "--markdown" in argv
    paths = [a for a in argv if not a.startswith("--")]
    recs = []
    for p in paths:
        with open(p) as f:
            for line in f:
                line = line.strip()
                if line:
                    try:
                        recs.append(json.loads(line))
                    except json.JSONDecodeError:
                        print(f"report: skipping a bad line in {p}: {line[:80]}", file=sys.stderr)
    rows = [r for r in recs if r.get("type") == "parity"]
    checks = [r for r in recs if r.get("type") == "check" and r.get("impl") == "parity"]
    bad = [r for r in checks if not r.get("ok")]
    for m in (r for r in recs if r.get("type") == "meta" and r.get("tool") == "parity"):
        print(f"parity: {m.get('device')} ({m.get('target')}); Spindle: {m.get('compiler')}; "
              f"hand-written: {m.get('handwritten_compiler')}; {m.get('reps')} pairs per kernel")
    head = ["kernel", "shape", "spindle ms", "hand-written ms", "ratio"]
    table = []
    for r in rows:
        mark = " *" if r["ratio"] > 1.03 else ""
        table.append([r["kernel"], r["shape"], f"{r['spindle_ms']:.4f}", f"{r['hand_ms']:.4f}",
                      f"{r['ratio']:.2f}{mark}"])
    if markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for row in table:
            print("| " + " | ".join(row) + " |")
    else:
        widths = [max(len(str(x)) for x in col) for col in zip(head, *table)] if table else [len(h) for h in head]
        line = "  ".join(h.ljust(w) for h, w in zip(head, widths))
        print(line)
        print("-" * len(line))
        for row in table:
            print("  ".join(str(c).ljust(w) for c, w in zip(row, widths)))
    over = [r for r in rows if r["ratio"] > 1.03]
    if rows:
        worst = max(rows, key=lambda r: r["ratio"])
        print(f"{len(rows)} rows, {len(over)} above 1.03 (marked *); worst {worst['ratio']:.2f} ({worst['kernel']} "
              f"{worst['shape']})")
    print(f"correctness: {len(checks) - len(bad)}/{len(checks)} parity checks passed")
    for r in bad:
        where = f" worst at [{r.get('worst_index')}]: got {r.get('worst_got')}, want {r.get('worst_want')}" \
            if "worst_index" in r else ""
        print(f"  WRONG: {r.get('kernel')} {r.get('output', '')} {r.get('shape', '')} {r.get('error', '')}{where}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
