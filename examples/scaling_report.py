#!/usr/bin/env python3
"""Markdown tables from the CSV of examples/scaling.sh (ex45, CG + Jacobi, weak and strong scaling).

    python3 examples/scaling_report.py build/scaling/scaling.csv [--md scaling.md] [--readme README.md]
                                       [--ref aijcusparse] [--last-run-only]

One table per case (weak, strong, large) and grid: a row per Mat type (and option set) and rank
count with KSPSolve and MatMult (maxima over ranks, from -log_view), the speedup over the same
type on 1 rank (strong: t1/tN; weak: the parallel efficiency t1/tN, 1.0 is perfect), the speedup
over the reference type (default aijcusparse, else aij) at the same rank count, the iterations and
the final residual norm, and the MPI types' parts of MatMult: exchange begin and end, diagonal
and off-diagonal products (GpuMatsHalo*, GpuMatsDiagMult, GpuMatsOffdMult). The heading names the
GPU, the PETSc version and the dates of the runs. Runs that failed are listed under the tables.

With --readme the tables replace the text between the lines "<!-- scaling:begin -->" and
"<!-- scaling:end -->" of that file. When the CSV holds several runs of one point (same case, grid,
type, options and ranks), the latest counts.

Standard library only.
"""

import argparse
import csv
import re
import sys
from collections import OrderedDict

CASE_ORDER = {"weak": 0, "strong": 1, "large": 2}


def number(text):
    try:
        return float(text) if text not in (None, "", "n/a") else None
    except ValueError:
        return None


def fmt_time(v):
    return "n/a" if v is None else "%.4f s" % v


def fmt_ratio(v):
    return "" if v is None else "%.2fx" % v


def label(row):
    return row["type"] + (" `%s`" % row["options"] if row["options"] else "")


def read(path, last_run_only):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if last_run_only and rows:
        last = max(r["date"] for r in rows)
        rows = [r for r in rows if r["date"] == last]
    latest = OrderedDict()
    for r in rows:  # later lines replace earlier ones of the same point
        latest[(r["case"], r["grid"], r["type"], r["options"], int(r["ranks"]))] = r
    return list(latest.values())


def tables(rows, ref):
    ok = [r for r in rows if r["status"] == "ok"]
    out = []
    if not rows:
        return "No runs in the CSV.\n"
    gpus = sorted({r["gpu"] for r in rows})
    petsc = sorted({r["petsc"] for r in rows})
    dates = sorted({r["date"] for r in rows})
    out.append("GPU: %s; PETSc %s; runs of %s%s.\n" % (", ".join(gpus), ", ".join(petsc), dates[0], "" if len(dates) == 1 else " to " + dates[-1]))
    if ref is None:
        types = {r["type"] for r in ok}
        ref = "aijcusparse" if "aijcusparse" in types else ("aij" if "aij" in types else None)
    groups = OrderedDict()
    for r in sorted(ok, key=lambda r: (CASE_ORDER.get(r["case"], 9), int(r["rows"]) // max(1, int(r["ranks"])) if r["case"] == "weak" else int(r["rows"]))):
        key = (r["case"], r["grid"] if r["case"] != "weak" else "x".join(r["grid"].split("x")[:2]))
        groups.setdefault(key, []).append(r)
    for (case, grid), rs in groups.items():
        if case == "weak":
            n = grid.split("x")[0]
            title = "Weak scaling: %s x %s x (%s N) on N ranks (%s^3 rows per rank)" % (n, n, n, n)
            scal = "efficiency vs 1 rank (KSPSolve)"
        else:
            title = "Strong scaling%s: %s (%s rows)" % ("" if case == "strong" else ", largest problem", grid, format(int(rs[0]["rows"]), ","))
            scal = "speedup vs 1 rank (KSPSolve, MatMult)"
        base = {}  # (label) -> 1-rank row
        refs = {}  # ranks -> reference row (plain options)
        for r in rs:
            if int(r["ranks"]) == 1:
                base[label(r)] = r
            if r["type"] == ref and not r["options"]:
                refs[int(r["ranks"])] = r
        out.append("\n#### %s\n" % title)
        out.append("| type | ranks | grid | KSPSolve | MatMult | %s | KSPSolve vs %s | iterations | residual | exchange begin / end | diagonal / off-diagonal product |" % (scal, ref or "reference"))
        out.append("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for r in sorted(rs, key=lambda r: (label(r) != ref, label(r), int(r["ranks"]))):
            k, m = number(r["ksp_solve_s"]), number(r["mat_mult_s"])
            b = base.get(label(r))
            s1 = ""
            if b is not None and int(r["ranks"]) != 1:
                kb, mb = number(b["ksp_solve_s"]), number(b["mat_mult_s"])
                if case == "weak":
                    s1 = "%.2f" % (kb / k) if kb and k else ""
                else:
                    s1 = "%s, %s" % (fmt_ratio(kb / k if kb and k else None) or "?", fmt_ratio(mb / m if mb and m else None) or "?")
            rr = refs.get(int(r["ranks"]))
            sref = fmt_ratio(number(rr["ksp_solve_s"]) / k if rr is not None and k and number(rr["ksp_solve_s"]) else None) if r is not rr else ""
            parts = lambda a, b: "" if number(r[a]) is None and number(r[b]) is None else "%s / %s" % (fmt_time(number(r[a])), fmt_time(number(r[b])))
            out.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (label(r), r["ranks"], r["grid"], fmt_time(k), fmt_time(m), s1, sref, r["iterations"], r["residual"],
                                                                               parts("halo_begin_s", "halo_end_s"), parts("diag_mult_s", "offd_mult_s")))
    bad = [r for r in rows if r["status"] != "ok"]
    if bad:
        out.append("\nRuns that did not complete:\n")
        for r in bad:
            out.append("- %s, %s, %s ranks, %s: %s" % (r["case"], r["grid"], r["ranks"], label(r), r["status"]))
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv")
    ap.add_argument("--md", help="write the tables to this file (default: stdout)")
    ap.add_argument("--readme", help="replace the text between <!-- scaling:begin --> and <!-- scaling:end --> in this file")
    ap.add_argument("--ref", help="reference type for the speedups (default aijcusparse, else aij)")
    ap.add_argument("--last-run-only", action="store_true", help="only the rows of the latest date in the CSV")
    a = ap.parse_args()
    text = tables(read(a.csv, a.last_run_only), a.ref)
    if a.md:
        with open(a.md, "w") as f:
            f.write(text)
    elif not a.readme:
        sys.stdout.write(text)
    if a.readme:
        with open(a.readme) as f:
            doc = f.read()
        pat = re.compile(r"(<!-- scaling:begin -->\n).*?(<!-- scaling:end -->)", re.S)
        if not pat.search(doc):
            sys.exit("%s has no <!-- scaling:begin --> ... <!-- scaling:end --> section" % a.readme)
        doc = pat.sub(lambda m: m.group(1) + text + m.group(2), doc)
        with open(a.readme, "w") as f:
            f.write(doc)


if __name__ == "__main__":
    main()
