#!/usr/bin/env python3
"""Tables and a plot from the CSV files of the petsc-gpumats MatMult benchmark (examples/bench.cu).

    python3 examples/bench_report.py results.csv [more.csv ...] [--md report.md] [--png speedup.png]

Writes a markdown table with one row per matrix and Mat type (matrix, nnz/row, type, time per
MatMult, GB/s of beta+, eta+, GFlop/s, speedup over aijcusparse and over cusparse-csr-alg1,
conversion time, the parameters the type chose) to stdout, or to the file of --md, under a line
naming the GPU, the PETSc version and the date of the runs. Runs with the MatMultTranspose columns
(bench -transpose, the default) get a second table: per matrix and type the implicit and the
explicit product, the explicit copy's build, how many products with A^T repay that build, and
cuSPARSE's transposed SpMV: what -mat_gpumats_transpose auto's default is chosen from. Types that were skipped or failed are
listed below the table. Speedups compare rows of the same run (same date, GPU and matrix): a
benchmark run appends one row per type, all with the run's date.

--png draws the speedup over aijcusparse (y) against nnz/row (x, log scale), one marker series per
type, in the style of Figure 6.6 of the CMRS paper. It needs matplotlib; without it the script
says so and writes the table only.

Standard library only (plus matplotlib for --png).
"""

import argparse
import csv
import sys
from collections import OrderedDict

REF = "aijcusparse"
ALG1 = "cusparse-csr-alg1"
BSR = "cusparse-bsr"
OURS = ("cmrscuda", "sellpcuda", "bellpackcuda", "autocuda")


def number(text):
    """float of a CSV field, None for an empty or malformed one"""
    try:
        return float(text) if text not in (None, "") else None
    except ValueError:
        return None


def read_rows(paths):
    rows = []
    for path in paths:
        try:
            with open(path, newline="") as f:
                reader = csv.DictReader(f)
                missing = {"date", "gpu", "petsc", "matrix", "nnz_per_row", "type", "status", "time_us"} - set(reader.fieldnames or [])
                if missing:
                    sys.exit(f"bench_report: {path} is not a benchmark CSV (no column {', '.join(sorted(missing))})")
                for r in reader:
                    if r.get("date") == "date":  # a header line repeated inside the file
                        continue
                    r["_file"] = path
                    rows.append(r)
        except OSError as e:
            sys.exit(f"bench_report: cannot read {path}: {e.strerror}")
    return rows


def group_runs(rows):
    """OrderedDict (date, gpu, petsc, matrix) -> list of rows, in file order"""
    runs = OrderedDict()
    for r in rows:
        runs.setdefault((r["date"], r["gpu"], r["petsc"], r["matrix"]), []).append(r)
    return runs


def time_of(run, type_name):
    for r in run:
        if r["type"] == type_name and r["status"] in ("ok", "FAIL"):
            return number(r["time_us"])
    return None


def fmt(value, spec, empty="-"):
    return empty if value is None else format(value, spec)


def md_cell(text):
    return (text or "").replace("|", "\\|").replace("\n", " ")


def summary_line(rows):
    """'GPU ..., PETSc ..., date ...' for one or several of each"""

    def distinct(key):
        return list(OrderedDict.fromkeys(r[key] for r in rows if r.get(key)))

    dates = sorted(distinct("date"))
    when = dates[0] if len(dates) == 1 else f"{dates[0]} to {dates[-1]}" if dates else "unknown date"
    cuda = distinct("cuda")
    return "GPU: {}; PETSc {}{}; {}".format(
        ", ".join(distinct("gpu")) or "unknown", ", ".join(distinct("petsc")) or "unknown", f"; CUDA {', '.join(cuda)}" if cuda else "", when
    )


def table(rows):
    runs = group_runs(rows)
    several_gpus = len({k[1] for k in runs}) > 1
    # matrices by nnz/row, then name; the runs of one matrix in date order
    order = sorted(runs, key=lambda k: (number(runs[k][0]["nnz_per_row"]) or 0, k[3], k[0]))
    head = ["matrix", "nnz/row"] + (["GPU"] if several_gpus else []) + [
        "type", "time (us)", "GB/s", "eta+", "GFlop/s", "speedup vs aijcusparse", "speedup vs cusparse-csr-alg1", "convert (ms)", "parameters"]
    align = ["---", "---:"] + (["---"] if several_gpus else []) + ["---", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---"]
    out = ["| " + " | ".join(head) + " |", "|" + "|".join(align) + "|"]
    notes = []
    for key in order:
        run = runs[key]
        t_ref, t_alg1 = time_of(run, REF), time_of(run, ALG1)
        first = run[0]
        for r in run:
            if r["status"] not in ("ok", "FAIL"):
                notes.append(f"{first['matrix']}: {r['type']} {r['status']}: {r.get('note') or 'no reason given'}")
                continue
            t = number(r["time_us"])
            name = r["type"] + (" **check FAIL**" if r["status"] == "FAIL" else "")
            params = r.get("params") or ""
            fill = number(r.get("fill_ratio"))
            if fill is not None and fill != 1.0:
                params = f"{params} (fill {fill:.3f})" if params else f"fill {fill:.3f}"
            cells = [md_cell(first["matrix"]), fmt(number(first["nnz_per_row"]), ".2f")] + ([md_cell(first["gpu"])] if several_gpus else []) + [
                md_cell(name),
                fmt(t, ".1f"),
                fmt(number(r.get("gbs")), ".0f"),
                fmt(number(r.get("eta_plus")), ".2f"),
                fmt(number(r.get("gflops")), ".1f"),
                fmt(t_ref / t if t_ref and t else None, ".2f"),
                fmt(t_alg1 / t if t_alg1 and t else None, ".2f"),
                fmt(number(r.get("convert_ms")), ".1f"),
                md_cell(params),
            ]
            out.append("| " + " | ".join(cells) + " |")
    return out, notes


def transpose_table(rows):
    """MatMultTranspose per run and type: implicit (atomics over the stored copy) against explicit
    (a transposed copy), the copy's build, and cuSPARSE's transposed SpMV of the same run"""
    runs = group_runs(rows)
    order = sorted(runs, key=lambda k: (number(runs[k][0]["nnz_per_row"]) or 0, k[3], k[0]))
    out = ["| matrix | nnz/row | type | implicit (us) | explicit (us) | explicit / implicit | build (ms) | products to repay the build | cuSPARSE A^T (us) | check |",
           "|---|---:|---|---:|---:|---:|---:|---:|---:|---|"]
    any_row = False
    for key in order:
        run = runs[key]
        t_cusparse = next((number(r.get("transpose_implicit_us")) for r in run if r["type"] == ALG1), None)
        for r in run:
            ti, te, tb = number(r.get("transpose_implicit_us")), number(r.get("transpose_explicit_us")), number(r.get("transpose_build_ms"))
            if ti is None or te is None:  # not timed both ways (the cuSPARSE rows, PETSc's other types, older files)
                continue
            any_row = True
            # the explicit copy pays for itself after build / (implicit - explicit) products, if it is faster at all
            repay = fmt(1e3 * tb / (ti - te), ".0f") if tb is not None and te < ti else "never"
            out.append("| " + " | ".join([md_cell(run[0]["matrix"]), fmt(number(run[0]["nnz_per_row"]), ".2f"), md_cell(r["type"]), fmt(ti, ".1f"), fmt(te, ".1f"),
                                            fmt(te / ti if ti else None, ".2f"), fmt(tb, ".2f"), repay, fmt(t_cusparse, ".1f"),
                                            md_cell(r.get("transpose_check") or "")]) + " |")
    return out if any_row else []


def summary(rows):
    """one row per run: the fastest of our types with their default parameters (variants type:tag
    left out), its speedups over aijcusparse, cuSPARSE CSR ALG1 and BSR, and autocuda's over ALG1"""
    runs = group_runs(rows)
    order = sorted(runs, key=lambda k: (number(runs[k][0]["nnz_per_row"]) or 0, k[3], k[0]))
    out = ["| matrix | best of our types | time (us) | eta+ | vs aijcusparse | vs cusparse-csr-alg1 | vs cusparse-bsr | autocuda vs cusparse-csr-alg1 |",
           "|---|---|---:|---:|---:|---:|---:|---:|"]
    for key in order:
        run = runs[key]
        ours = [r for r in run if r["type"] in OURS and r["status"] == "ok" and number(r["time_us"])]
        if not ours or not time_of(run, ALG1):  # runs without the cuSPARSE baselines compare options only
            continue
        best = min(ours, key=lambda r: number(r["time_us"]))
        t = number(best["time_us"])
        ratio = lambda other: fmt(time_of(run, other) / t if time_of(run, other) else None, ".2f")
        t_auto, t_alg1 = time_of(run, "autocuda"), time_of(run, ALG1)
        out.append("| " + " | ".join([md_cell(run[0]["matrix"]), best["type"], fmt(t, ".1f"), fmt(number(best.get("eta_plus")), ".2f"), ratio(REF), ratio(ALG1),
                                        ratio(BSR), fmt(t_alg1 / t_auto if t_alg1 and t_auto else None, ".2f")]) + " |")
    return out


def autocuda_table(rows):
    """one row per run with autocuda: the fastest Mat type of the run at its default parameters
    (aijcusparse, sellcuda and ours; not the raw cuSPARSE baselines nor option variants type:tag),
    autocuda's pick and its time against that fastest one and against aijcusparse, and cmrscuda's
    against aijcusparse: what autocuda's calibration per GPU is judged by"""
    runs = group_runs(rows)
    several_gpus = len({k[1] for k in runs}) > 1
    order = sorted(runs, key=lambda k: (k[1], number(runs[k][0]["nnz_per_row"]) or 0, k[3], k[0]))
    out = ["| matrix | " + ("GPU | " if several_gpus else "") + "fastest type | autocuda picked | autocuda / fastest | autocuda vs aijcusparse | cmrscuda vs aijcusparse |",
           "|---|" + ("---|" if several_gpus else "") + "---|---|---:|---:|---:|"]
    for key in order:
        run = runs[key]
        types = [r for r in run if r["status"] == "ok" and number(r["time_us"]) and ":" not in r["type"] and not r["type"].startswith("cusparse-")]
        t_auto, t_ref, t_cmrs = time_of(run, "autocuda"), time_of(run, REF), time_of(run, "cmrscuda")
        if not t_auto or not types:
            continue
        fastest = min(types, key=lambda r: number(r["time_us"]))
        auto = next(r for r in run if r["type"] == "autocuda")
        picked = (auto.get("params") or "").split("AUTO: picked ", 1)[-1].split(" (", 1)[0].split(";", 1)[0] if "AUTO: picked" in (auto.get("params") or "") else "-"
        out.append("| " + " | ".join([md_cell(run[0]["matrix"])] + ([md_cell(key[1])] if several_gpus else []) + [
            fastest["type"], md_cell(picked), fmt(t_auto / number(fastest["time_us"]), ".3f"),
            fmt(t_ref / t_auto if t_ref else None, ".2f"), fmt(t_ref / t_cmrs if t_ref and t_cmrs else None, ".2f")]) + " |")
    return out


def plot(rows, path):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"bench_report: matplotlib is not importable here; {path} not written", file=sys.stderr)
        return False
    runs = group_runs(rows)
    series = OrderedDict()  # type -> [(nnz/row, speedup)]
    labels = {}  # nnz/row -> matrix names
    for key, run in runs.items():
        t_ref = time_of(run, REF)
        x = number(run[0]["nnz_per_row"])
        if not t_ref or not x:
            continue
        labels.setdefault(x, set()).add(run[0]["matrix"].split(" ")[0])
        for r in run:
            t = number(r["time_us"]) if r["status"] in ("ok", "FAIL") else None
            if t and r["type"] != REF and ":" not in r["type"]:  # option variants (type:tag) stay in the table only
                series.setdefault(r["type"], []).append((x, t_ref / t))
    if not series:
        print(f"bench_report: no run with aijcusparse and another type; {path} not written", file=sys.stderr)
        return False
    from matplotlib.ticker import FixedLocator, NullFormatter, NullLocator

    markers = "os^Dv<>phX*P8"
    fig, ax = plt.subplots(figsize=(10, 5.5))
    for k, (name, pts) in enumerate(series.items()):
        pts.sort()
        ax.plot([p[0] for p in pts], [p[1] for p in pts], linestyle="none", marker=markers[k % len(markers)], markersize=7, label=name, alpha=0.85)
    ax.axhline(1.0, color="gray", linewidth=1, linestyle="--", label=REF)
    ax.set_xscale("log")
    # plain numbers at 1-2-5 steps instead of powers of ten: nnz/row spans one or two decades
    xs = [x for pts in series.values() for x, _ in pts]
    lo, hi = min(xs) / 1.3, max(xs) * 1.3
    ax.set_xlim(lo, hi)
    ticks = [m * 10**e for e in range(-1, 6) for m in (1, 2, 5) if lo <= m * 10**e <= hi] or [min(xs), max(xs)]
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_major_formatter(lambda v, _: f"{v:g}")
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("nonzeros per row")
    ax.set_ylabel("MatMult speedup over aijcusparse")
    ax.set_title("MatMult speedup over aijcusparse\n" + summary_line(rows), fontsize=9)
    ax.grid(True, which="both", linewidth=0.3)
    ymin = ax.get_ylim()[0]
    for x, names in sorted(labels.items()):
        ax.annotate(", ".join(sorted(names)), (x, ymin), xytext=(0, 4), textcoords="offset points", rotation=90, fontsize=7, color="dimgray", ha="center", va="bottom")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    fig.tight_layout()
    fig.savefig(path, dpi=150)
    plt.close(fig)
    return True


def main(argv=None):
    parser = argparse.ArgumentParser(description="Markdown table and speedup plot from petsc-gpumats bench CSV files")
    parser.add_argument("csv", nargs="+", help="CSV files written by build/bin/bench -csv")
    parser.add_argument("--md", metavar="FILE", help="write the markdown here instead of stdout")
    parser.add_argument("--png", metavar="FILE", help="also plot speedup over aijcusparse against nnz/row (needs matplotlib)")
    args = parser.parse_args(argv)

    rows = read_rows(args.csv)
    if not rows:
        sys.exit("bench_report: the CSV files hold no results")
    lines, notes = table(rows)
    text = ["MatMult benchmark: " + summary_line(rows), "",
            "GB/s and eta+ count beta+ = 12 nnz + 4 (n+1) + 16 n bytes for every type; eta+ is relative to the copy bandwidth of the run.", ""]
    text += ["Fastest of our types per matrix (default parameters):", ""] + summary(rows) + [""]
    at = autocuda_table(rows)
    if len(at) > 2:
        text += ["autocuda per matrix: its time over the fastest Mat type's of the run (1.000: it is the fastest), and its", "and cmrscuda's speedup over aijcusparse:", ""] + at + [""]
    text += ["Every type and option variant (type:tag):", ""]
    text += lines
    tt = transpose_table(rows)
    if tt:
        text += ["", "MatMultTranspose: implicit product (atomics over the stored copy) and explicit copy, per type:", ""] + tt
    if notes:
        text += ["", "Not run:", ""] + [f"- {md_cell(n)}" for n in notes]
    md = "\n".join(text) + "\n"
    if args.md:
        with open(args.md, "w") as f:
            f.write(md)
    else:
        sys.stdout.write(md)
    if args.png and plot(rows, args.png) and args.md:
        print(f"bench_report: wrote {args.md} and {args.png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
