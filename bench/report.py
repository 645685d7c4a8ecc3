#!/usr/bin/env python3
"""Merge the JSON lines of gpu_check and peers.py into one table.

    python3 bench/report.py results.jsonl [more.jsonl ...] [--markdown]

Columns: kernel, size, Spindle ms and GB/s, % of the measured copy bandwidth
(bytes read + written), PyTorch and Triton ms, and best peer time / Spindle
time (above 1: Spindle is faster). matmul: TFLOP/s and % of cuBLAS.
Exit status 1 when any correctness check in the input failed.
"""
import json
import sys


def load(paths):
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
    return recs


def fmt_ms(v):
    return "-" if v is None else f"{v:.3f}"


def main(argv):
    markdown = "--markdown" in argv
    paths = [a for a in argv if not a.startswith("--")]
    recs = load(paths)
    perf = [r for r in recs if r.get("type") == "perf"]
    checks = [r for r in recs if r.get("type") == "check"]
    bad = [r for r in checks if not r.get("ok")]
    cache_bad = [r for r in recs if r.get("type") == "cache_check" and not r.get("ok")]

    copies = [r for r in perf if r["impl"] == "copy"]
    copy_gbps = max((r["gbps"] for r in copies), default=None)

    def peer(impl, kernel, size):
        for r in perf:
            if r["impl"] == impl and r["kernel"] == kernel and r["size"] == size:
                return r
        return None

    rows = []
    for r in perf:
        if r["impl"] != "spindle":
            continue
        kernel, size, variant = r["kernel"], r["size"], r.get("variant", "")
        name = kernel + (f" [{variant}]" if variant else "")
        t = peer("torch", kernel, size)
        tr = peer("triton", kernel, size)
        cb = peer("cublas", kernel, size)
        if kernel == "matmul":
            sp = f"{r['ms']:.3f} ms {r.get('tflops', 0):.1f} TFLOP/s"
            roof = "-"
            if cb:
                pct = 100.0 * cb["ms"] / r["ms"]
                vs = f"{pct:.0f}% of cuBLAS ({cb.get('tflops', 0):.1f} TFLOP/s)"
            else:
                vs = "-"
            rows.append([name, size, sp, roof, fmt_ms(cb["ms"]) if cb else "-", "-", vs])
            continue
        sp = f"{r['ms']:.3f} ms {r['gbps']:.0f} GB/s"
        roof = f"{100.0 * r['gbps'] / copy_gbps:.0f}%" if copy_gbps else "-"
        peers = [p["ms"] for p in (t, tr) if p]
        vs = f"{min(peers) / r['ms']:.2f}x" if peers else "-"
        rows.append([name, size, sp, roof, fmt_ms(t["ms"]) if t else "-", fmt_ms(tr["ms"]) if tr else "-", vs])

    head = ["kernel", "size", "Spindle", "% copy", "PyTorch ms", "Triton ms", "best peer / Spindle"]
    print()
    if copy_gbps:
        print(f"copy roofline: {copy_gbps:.0f} GB/s (device-to-device copy, bytes read + written)")
    for r in recs:
        if r.get("type") == "launch_overhead":
            print(f"launch overhead: cuLaunchKernel {r['raw_us']:.2f} us, Kernel::launch {r['runtime_us']:.2f} us "
                  f"(+{r['added_us']:.2f} us per launch)")
    tot = {r.get("phase"): r["ms"] for r in recs if r.get("type") == "compile" and r.get("kernel") == "total"}
    if tot:
        print("compile, all samples, new process: " + ", ".join(f"{k} {v:.0f} ms" for k, v in tot.items()))
    if markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for row in rows:
            print("| " + " | ".join(row) + " |")
    else:
        widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)] if rows else [len(h) for h in head]
        line = "  ".join(h.ljust(w) for h, w in zip(head, widths))
        print(line)
        print("-" * len(line))
        for row in rows:
            print("  ".join(str(c).ljust(w) for c, w in zip(row, widths)))
    n_ok = len(checks) - len(bad)
    print(f"correctness: {n_ok}/{len(checks)} checks passed" + (f", {len(cache_bad)} cache checks FAILED" if cache_bad else ""))
    for r in bad:
        print(f"  WRONG: {r.get('impl')} {r.get('kernel')} {r.get('output', '')} {r.get('shape', '')} "
              f"{r.get('error', '')} max err {r.get('max_abs_err')}")
    return 1 if bad or cache_bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
