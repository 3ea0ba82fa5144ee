#!/usr/bin/env python3
"""Per-nonzero figures from Nsight Compute counters of MatMult kernels (examples/profile_kernels.sh).

    python3 examples/profile_report.py collect run.ncu.csv --matrix powerlaw --type cmrscuda --append profile.csv
    python3 examples/profile_report.py report profile.csv --bench bench.csv [--md profile.md]

collect reads one `ncu --csv --page raw --print-units base` log (one row per profiled launch: the
kernels inside bench's NVTX range of one type's timed calls) and appends its launches to a long CSV
with the matrix and type of the run.

report makes one row per matrix and type: the launches of one MatMult (all launches of the type
divided by the number of products, the count of its most frequent kernel) and, from the counters,
  time        kernel time of one product (us; ncu, caches flushed before each launch)
  DRAM B/nnz  bytes read and written in DRAM per stored nonzero; beta+ B/nnz is the benchmark's
              minimum (12 nnz + 4 (n+1) + 16 n bytes), so their ratio is the traffic beyond the
              minimum: the vector x read more than once, padding, index overhead
  DRAM GB/s   those bytes over the kernel time, and DRAM % of peak (ncu's dram__throughput)
  L2>L1 B/nnz bytes the SMs read from L2 per nonzero (32-byte sectors): the gathers of x that
              miss L1 cost a sector each, so this is where scattered columns show; L2 % peak is
              ncu's lts__throughput, L2 hit % the share of L2 sectors found in L2
  sect/req    global-load sectors per request: 4 for fully used 128-byte lines of doubles, more
              where a warp's loads scatter
  inst/nnz    warp instructions per nonzero, and warp eff. (active threads per instruction / 32)
  occ. %      achieved occupancy; lsb % the share of warps stalled on memory (long scoreboard)
Standard library only.
"""

import argparse
import csv
import os
import sys
from collections import OrderedDict, defaultdict

REF = "aijcusparse"
METRICS = [
    "gpu__time_duration.sum",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "lts__throughput.avg.pct_of_peak_sustained_elapsed",
    "lts__t_sectors_srcunit_tex_op_read.sum",
    "lts__t_sector_hit_rate.pct",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "smsp__inst_executed.sum",
    "smsp__thread_inst_executed.sum",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct",
    "smsp__warp_issue_stalled_lg_throttle_per_warp_active.pct",
]
FIELDS = ["matrix", "type", "id", "kernel"] + METRICS


def number(text):
    try:
        return float(str(text).replace(",", "")) if text not in (None, "") else None
    except ValueError:
        return None


def short_name(kernel):
    """segmented_kernel of 'void cmrs::(anonymous namespace)::segmented_kernel<double, 16>(long, ...)'"""
    name = kernel
    for anon in ("(anonymous namespace)", "<unnamed>", "unnamed>"):
        name = name.replace(anon, "anon")
    depth, out = 0, ""
    for ch in name:  # up to the parameter list, without template arguments
        if ch == "(" and depth == 0:
            break
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth = max(depth - 1, 0)
        elif depth == 0:
            out += ch
    return out.split("::")[-1].split()[-1] if out.split() else kernel


def read_ncu(path):
    """the launches of one ncu raw CSV log: dicts of kernel name and metric values"""
    with open(path, newline="") as f:
        lines = [line for line in f if line.startswith('"')]  # drops ==PROF== lines and the app's
    rows = list(csv.reader(lines))
    if not rows:
        return []
    head = rows[0]
    launches = []
    for row in rows[1:]:
        rec = dict(zip(head, row))
        if not number(rec.get("ID")) and rec.get("ID") != "0":  # the units row
            continue
        launches.append(rec)
    return launches


def collect(args):
    launches = read_ncu(args.log)
    if not launches:
        sys.exit(f"profile_report: no profiled launches in {args.log}")
    new = not os.path.exists(args.append) or os.path.getsize(args.append) == 0
    with open(args.append, "a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        if new:
            w.writeheader()
        for rec in launches:
            kernel = rec.get("Kernel Name", "")
            row = {"matrix": args.matrix, "type": args.type, "id": rec.get("ID"), "kernel": kernel}
            for m in METRICS:
                row[m] = rec.get(m, "")
            w.writerow(row)
    print(f"# {len(launches)} launches of {args.matrix} / {args.type}")


def bench_sizes(path):
    """matrix family -> (rows, nnz) from bench's CSV ('poisson7 n=160' -> poisson7)"""
    sizes = {}
    if path and os.path.exists(path):
        with open(path, newline="") as f:
            for r in csv.DictReader(f):
                fam = r["matrix"].split()[0]
                sizes.setdefault(fam, (number(r["rows"]), number(r["nnz"])))
    return sizes


def fmt(v, digits=1):
    return "-" if v is None else f"{v:.{digits}f}"


def report(args):
    with open(args.csv, newline="") as f:
        rows = list(csv.DictReader(f))
    sizes = bench_sizes(args.bench)
    groups = OrderedDict()
    for r in rows:
        groups.setdefault((r["matrix"], r["type"]), []).append(r)
    out = []
    out.append("| matrix | type | kernels | time (us) | DRAM B/nnz | beta+ B/nnz | DRAM GB/s | DRAM % peak "
               "| L2>L1 B/nnz | L2 % peak | L2 hit % | sect/req | inst/nnz | warp eff. % | occ. % | lsb % |")
    out.append("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    order = sorted(groups, key=lambda k: (k[0], k[1] != REF, k[1]))
    for key in order:
        launches = groups[key]
        matrix, owner = key  # owner: the type whose timed calls launched these
        counts = defaultdict(int)
        for r in launches:
            counts[r["kernel"]] += 1
        products = max(counts.values())

        def total(m):
            vals = [number(r[m]) for r in launches]
            return None if any(v is None for v in vals) else sum(vals) / products

        def weighted(m):  # a percentage of the product, each launch weighted by its time
            num = den = 0.0
            for r in launches:
                v, t = number(r[m]), number(r["gpu__time_duration.sum"])
                if v is None or t is None:
                    return None
                num, den = num + v * t, den + t
            return num / den if den else None

        t_ns = total("gpu__time_duration.sum")
        rows_n, nnz = sizes.get(matrix, (None, None))
        dram = None
        if total("dram__bytes_read.sum") is not None and total("dram__bytes_write.sum") is not None:
            dram = total("dram__bytes_read.sum") + total("dram__bytes_write.sum")
        per = (lambda v: v / nnz if v is not None and nnz else None)
        beta = (12 * nnz + 4 * (rows_n + 1) + 16 * rows_n) if nnz and rows_n else None
        l2 = total("lts__t_sectors_srcunit_tex_op_read.sum")
        req, sect = total("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"), total("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum")
        inst, tinst = total("smsp__inst_executed.sum"), total("smsp__thread_inst_executed.sum")
        kernels = "+".join(OrderedDict((short_name(k), 1) for k in counts))
        out.append("| " + " | ".join([
            matrix, owner, kernels, fmt(t_ns / 1e3 if t_ns else None),
            fmt(per(dram), 2), fmt(per(beta), 2),
            fmt(dram / t_ns if dram and t_ns else None, 0), fmt(weighted("dram__throughput.avg.pct_of_peak_sustained_elapsed")),
            fmt(per(l2 * 32 if l2 is not None else None), 2), fmt(weighted("lts__throughput.avg.pct_of_peak_sustained_elapsed")),
            fmt(weighted("lts__t_sector_hit_rate.pct")),
            fmt(sect / req if sect is not None and req else None, 2),
            fmt(per(inst), 2), fmt(100 * tinst / (32 * inst) if tinst is not None and inst else None),
            fmt(weighted("sm__warps_active.avg.pct_of_peak_sustained_active")),
            fmt(weighted("smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct")),
        ]) + " |")
    text = "\n".join(out) + "\n"
    if args.md:
        with open(args.md, "w") as f:
            f.write("Nsight Compute counters of one MatMult (caches flushed before each launch); "
                    "B/nnz = bytes per stored nonzero. Columns: examples/profile_report.py.\n\n" + text)
    else:
        sys.stdout.write(text)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("collect")
    c.add_argument("log")
    c.add_argument("--matrix", required=True)
    c.add_argument("--type", required=True)
    c.add_argument("--append", required=True)
    r = sub.add_parser("report")
    r.add_argument("csv")
    r.add_argument("--bench")
    r.add_argument("--md")
    args = p.parse_args()
    collect(args) if args.cmd == "collect" else report(args)


if __name__ == "__main__":
    main()
