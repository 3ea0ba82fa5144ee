#!/usr/bin/env python3
"""CSV rows and markdown tables for the petsc-gpumats solver benchmark (examples/solverbench.sh).

    python3 examples/solverbench_report.py add CSV --log LOG --case NAME --type TYPE --rc RC --wall SECONDS
            [--title TEXT] [--total ksp|snes] [--fixed-its] [--timeout SECONDS] [--command TEXT] [--rep N] [--meta KEY=VALUE ...]
    python3 examples/solverbench_report.py skip CSV --case NAME --type TYPE --note TEXT [--title TEXT] [--meta KEY=VALUE ...]
    python3 examples/solverbench_report.py report CSV [--md FILE] [--readme README.md --link PATH]
    python3 examples/solverbench_report.py summary CSV [CSV ...]

`add` parses the output of one run of a PETSc tutorial or example (its -log_view, the converged
reasons and the final residual) and appends one row to CSV, writing the header when the file is new;
it prints a one-line summary. SNES runs (--total snes) also record the assembly (the application's
CooAssembly event where it has one, else MatAssemblyEnd) and the format build or update (the type's
conversion or copy event, plus petsc-gpumats' values-only GpuMatsValues), and get their own table
columns; events a run did not log (a host type, a PETSc without CUDA) stay empty. `skip` appends a row for a run that was not made (listed under the tables).
Rows of several runs of one case with one type (--rep, SOLVERBENCH_REPEAT) are read as one: the run
with the median KSPSolve, its note giving the count and the range (a failed repetition instead).
`report` writes one markdown table per case to stdout or to --md, under a line naming the GPU, the
PETSc version and the date; with --readme it also replaces the block between the lines
`<!-- solverbench:begin -->` and `<!-- solverbench:end -->` of that file by the same tables and a
link to --link (the full report). `summary` prints one markdown line per case of one or more CSVs:
iterations, KSPSolve of each type with its speedup over the reference, and each type's PCSetUp speedup.

-log_view is read robustly: event names may contain spaces ("PCGAMG Gal l00"), so each event line is
split from the right (20 numeric fields, 26 when PETSc has CUDA and prints the CpuToGpu/GpuToCpu
columns); an event that appears in several stages (ex56 logs its setup and solve as stages) is summed
over them; times PETSc prints as "n/a" stay empty.

Standard library only.
"""

import argparse
import csv
import os
import re
import sys
import textwrap
from collections import OrderedDict

FIELDS = ["date", "gpu", "host", "petsc", "cuda", "size", "case", "title", "type", "rep", "status", "note", "its", "its_list", "newton_its",
          "reason", "residual", "total_def", "ksp_solve_s", "pc_setup_s", "total_s", "snes_solve_s", "jacobian_s", "assembly_def", "assembly_s",
          "format_s", "matmult_s", "matmult_count", "matmulttranspose_s", "convert_s", "h2d_kspsolve", "d2h_kspsolve", "run_s", "wall_s", "command"]
BEGIN, END = "<!-- solverbench:begin -->", "<!-- solverbench:end -->"
MIN_SPEEDUP_S = 1e-3  # no speedup is given where either time is shorter
REFS = ("aijcusparse", "aij")  # the speedup reference: the first of these that ran, else the first type listed

# the event that converts (or copies) the matrix into the type's GPU or format storage
CONVERT_EVENTS = {"aijcusparse": "MatCUSPARSCopyTo", "sellcuda": "MatCUDACopyTo", "cmrs": "CMRSConvert", "sellp": "SELLPConvert",
                  "bellpack": "BELLPACKConvert", "auto": "AUTOConvert"}
# petsc-gpumats' values-only refill of a format copy (same nonzero pattern), beside its conversions
VALUES_EVENT = "GpuMatsValues"
OUR_FORMATS = ("cmrs", "sellp", "bellpack", "auto")
# the SNES cases' assembly: the application's own event around MatSetValuesCOO where it logs one
# (examples/coo_newton.c; it holds whatever MatSetValuesCOO does, the final assembly included, which
# PETSc 3.18 runs outside its MatSetValuesCOO event and 3.25 inside), else MatAssemblyEnd
ASSEMBLY_EVENTS = ("CooAssembly", "MatAssemblyEnd")
NUMBER = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")


def number(text):
    try:
        return float(text) if text not in (None, "", "n/a") else None
    except ValueError:
        return None


# ---- parsing one run ----------------------------------------------------------------------------
def parse_events(lines):
    """(has_gpu_columns, {event name: {count, time, h2d, d2h}}) from -log_view, summed over stages"""
    gpu = any("CpuToGpu" in line for line in lines)
    ncols = 26 if gpu else 20
    events = OrderedDict()
    inside = False
    for line in lines:
        if line.startswith("Event ") and "Time (sec)" in line:
            inside = True
            continue
        if inside and line.startswith("Object Type"):
            break
        tok = line.split()
        if not inside or len(tok) <= ncols:
            continue
        vals = tok[-ncols:]
        if not all(v == "n/a" or NUMBER.match(v) for v in vals):
            continue
        e = events.setdefault(" ".join(tok[:-ncols]), {"count": 0, "time": None, "h2d": None, "d2h": None})
        e["count"] += int(number(vals[0]) or 0)
        for key, i in (("time", 2),) + ((("h2d", 21), ("d2h", 23)) if gpu else ()):
            v = number(vals[i])
            if v is not None:
                e[key] = (e[key] or 0) + v
    return gpu, events


def petsc_error(lines):
    """the first lines of PETSc's error message (up to two, without links), or None"""
    out, on = [], False
    for line in lines:
        if "-- Error Message --" in line:
            on = True
            continue
        if on and re.search(r"See https://petsc.org/release/faq|Petsc Release|PETSc Release|WARNING!", line):
            break
        if on and "See https" not in line:
            text = re.sub(r"\s*:?\s*https?://\S+", "", re.sub(r".*PETSC ERROR: ", "", line)).strip()
            if text:
                out.append(text)
            if len(out) == 2:
                break
    return "; ".join(out) or None


def parse_run(text, total_def, fixed_its):
    lines = text.splitlines()
    gpu, ev = parse_events(lines)
    row = {}

    def t(name):
        return ev[name]["time"] if name in ev else None

    lin = re.findall(r"Linear solve (?:converged|did not converge) due to (\w+) iterations (\d+)", text)
    nonlin = re.findall(r"Nonlinear solve (?:converged|did not converge) due to (\w+) iterations (\d+)", text)
    if lin:
        row["its"] = sum(int(n) for _, n in lin)
        row["its_list"] = ",".join(n for _, n in lin)
    if nonlin:
        row["newton_its"] = nonlin[-1][1]
    reasons = [r for r, _ in lin] + [r for r, _ in nonlin]
    bad = [r for r in reasons if r.startswith("DIVERGED") and not (fixed_its and r == "DIVERGED_ITS")]
    row["reason"] = (nonlin[-1][0] if nonlin else lin[-1][0]) if reasons else ""
    res = re.findall(r"KSP final norm of residual (\S+)", text) if total_def == "ksp" else re.findall(r"\d+ SNES Function norm (\S+)", text)
    row["residual"] = res[-1] if res else ""
    row["ksp_solve_s"] = t("KSPSolve")
    row["pc_setup_s"] = t("PCSetUp")
    row["snes_solve_s"] = t("SNESSolve")
    row["jacobian_s"] = t("SNESJacobianEval")
    row["matmult_s"] = t("MatMult")
    row["matmult_count"] = ev["MatMult"]["count"] if "MatMult" in ev else None
    row["matmulttranspose_s"] = t("MatMultTranspose")
    if total_def == "snes":
        row["total_def"] = "SNESSolve"
        row["total_s"] = row["snes_solve_s"]
        name = next((e for e in ASSEMBLY_EVENTS if e in ev), None)
        row["assembly_def"], row["assembly_s"] = (name, t(name)) if name else ("", None)
    else:
        row["total_def"] = "PCSetUp+KSPSolve"
        k, p = row["ksp_solve_s"], row["pc_setup_s"]
        row["total_s"] = k + p if k is not None and p is not None else None
    if gpu and "KSPSolve" in ev:
        row["h2d_kspsolve"], row["d2h_kspsolve"] = ev["KSPSolve"]["h2d"], ev["KSPSolve"]["d2h"]
    m = re.search(r"^Time \(sec\):\s+(\S+)", text, re.M)
    row["run_s"] = number(m.group(1)) if m else None
    # ("Using Petsc Release Version 3.18.5, ..." in -log_view, "Petsc Release Version ..." in an error's trailer)
    m = re.search(r"PETSc (?:Release )?Version ([0-9][0-9.]*)", text, re.I) or re.search(r"PETSc Development GIT revision: (\S+)", text, re.I)
    row["petsc"] = m.group(1) if m else ""
    row["_events"] = ev
    row["_bad"] = bad
    row["_lines"] = lines
    return row


def fmt_num(v):
    if v is None or v == "":
        return ""
    if isinstance(v, float):
        return "%.6g" % v
    return str(v)


def append_row(path, row):
    new = not os.path.exists(path) or os.path.getsize(path) == 0
    with open(path, "a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS, extrasaction="ignore")
        if new:
            w.writeheader()
        w.writerow({k: fmt_num(row.get(k)) for k in FIELDS})


def meta_dict(items):
    out = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep:
            sys.exit(f"solverbench_report: --meta {item}: expected KEY=VALUE")
        out[key] = value
    return out


def cmd_add(args):
    try:
        with open(args.log, errors="replace") as f:
            text = f.read()
    except OSError as e:
        text = f"(no output: {e.strerror})"
    row = parse_run(text, args.total, args.fixed_its)
    meta = meta_dict(args.meta)
    if row["petsc"]:
        meta.pop("petsc", None)
    row.update(meta)
    row.update({"case": args.case, "title": args.title or "", "type": args.type, "rep": args.rep, "wall_s": args.wall, "command": args.command or ""})
    base = args.type.split("+")[0]  # (a variant of a type, TYPE+VARIANT, converts as the type)
    base = base[:-4] if base.endswith("cuda") and base not in CONVERT_EVENTS else base
    conv = CONVERT_EVENTS.get(base)
    if conv and conv in row["_events"]:
        row["convert_s"] = row["_events"][conv]["time"]
    # the format build or update: the conversions, and for our types the values-only refills (never
    # nested in each other); none for types without a copy of their own (aij)
    parts = [row["_events"][e]["time"] for e in ([conv] if conv else []) + ([VALUES_EVENT] if base in OUR_FORMATS else [])
             if e in row["_events"] and row["_events"][e]["time"] is not None]
    row["format_s"] = sum(parts) if parts else None
    rc = args.rc
    if rc in (124, 137) or (args.timeout and args.wall and args.wall >= args.timeout and rc != 0):
        row["status"], row["note"] = "timeout", f"killed after {args.timeout or args.wall:g} s"
    elif rc != 0:
        err = petsc_error(row["_lines"])
        if not err:
            tail = [l.strip() for l in row["_lines"] if l.strip()]
            err = tail[-1] if tail else "no output"
        row["status"], row["note"] = "error", f"exit code {rc}: {err}"
    elif row["ksp_solve_s"] is None:
        row["status"], row["note"] = "error", "no KSPSolve event in -log_view output"
    elif row["_bad"]:
        row["status"], row["note"] = "diverged", ", ".join(OrderedDict.fromkeys(row["_bad"]))
    else:
        row["status"], row["note"] = "ok", ""
    append_row(args.csv, row)
    parts = [f"{args.case} {args.type}: {row['status']}"]
    if row["note"]:
        parts.append(row["note"][:160])
    if row.get("its") is not None:
        parts.append(f"{row['its']} its" + (f" ({row['newton_its']} Newton)" if row.get("newton_its") else ""))
    for label, key in (("KSPSolve", "ksp_solve_s"), ("PCSetUp", "pc_setup_s"), ("total", "total_s")):
        if row.get(key) is not None:
            parts.append(f"{label} {row[key]:.4g} s")
    parts.append(f"wall {args.wall:.1f} s")
    print(", ".join(parts))
    return 0


def cmd_skip(args):
    row = meta_dict(args.meta)
    row.update({"case": args.case, "title": args.title or "", "type": args.type, "status": "skipped", "note": args.note})
    append_row(args.csv, row)
    print(f"{args.case} {args.type}: skipped, {args.note}")
    return 0


# ---- the report -----------------------------------------------------------------------------------
def read_rows(path):
    try:
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            missing = {"case", "type", "status", "ksp_solve_s", "pc_setup_s"} - set(reader.fieldnames or [])
            if missing:
                sys.exit(f"solverbench_report: {path} is not a solver benchmark CSV (no column {', '.join(sorted(missing))})")
            return [r for r in reader if r.get("case") != "case"]
    except OSError as e:
        sys.exit(f"solverbench_report: cannot read {path}: {e.strerror}")


def medians(rows):
    """One row per case and type: where a case ran several times with a type (SOLVERBENCH_REPEAT),
    the run whose KSPSolve is the median (the lower one of an even count), so that every column of
    the row comes from one run; its note gives the count and the KSPSolve range. A repetition that
    did not end ok is the row instead: a failure is never hidden behind a median."""
    groups = OrderedDict()
    for r in rows:
        groups.setdefault((r["case"], r["type"]), []).append(r)
    out = []
    for runs in groups.values():
        if len(runs) == 1:
            out.append(runs[0])
            continue
        bad = [r for r in runs if r["status"] != "ok"]
        if bad:
            r = dict(bad[0])
            r["note"] = (r.get("note") or "") + f" (repetition {r.get('rep') or '?'} of {len(runs)})"
            out.append(r)
            continue
        times = sorted(runs, key=lambda r: number(r.get("ksp_solve_s")) or 0.0)
        r = dict(times[(len(times) - 1) // 2])
        lo, hi = number(times[0].get("ksp_solve_s")), number(times[-1].get("ksp_solve_s"))
        r["note"] = f"median KSPSolve of {len(runs)} runs ({seconds(lo)} to {seconds(hi)} s)"
        its = {t.get("its") for t in runs}
        if len(its) > 1:
            r["status"], r["note"] = "differs", f"iterations differ between runs: {', '.join(sorted(i or '-' for i in its))}"
        out.append(r)
    return out


def distinct(rows, key):
    return list(OrderedDict.fromkeys(r[key] for r in rows if r.get(key)))


def header_line(rows):
    dates = sorted(distinct(rows, "date"))
    when = dates[0] if len(dates) == 1 else f"{dates[0]} to {dates[-1]}" if dates else "unknown date"
    cuda = distinct(rows, "cuda")
    host = distinct(rows, "host")
    sizes = distinct(rows, "size")
    ranks = "MPI ranks as each case's name says (-npN; else one)" if any(re.search(r"-np\d+$", r["case"]) for r in rows) else "one MPI rank"
    reps = max((int(r.get("rep") or 1) for r in rows), default=1)
    runs = "one run per case and type" if reps == 1 else f"{reps} runs per case and type, the types taking turns; each row the run with the median KSPSolve"
    return "GPU: {}; PETSc {}{}; host CPU: {}; {}; size {}; {}, {}".format(
        ", ".join(distinct(rows, "gpu")) or "none", ", ".join(distinct(rows, "petsc")) or "unknown", f"; CUDA {', '.join(cuda)}" if cuda else "",
        ", ".join(host) or "unknown", when, ", ".join(sizes) or "unknown", ranks, runs)


def reference(rows):
    """the first of REFS that ran, else the first of them that was tried, else the first type tried"""
    tried = [r for r in rows if r["status"] != "skipped"]
    for pool in ([r["type"] for r in tried if r["status"] == "ok"], [r["type"] for r in tried]):
        for ref in REFS:
            if ref in pool:
                return ref
    return tried[0]["type"] if tried else None


def caption(rows, ref):
    gpu_cols = any(r.get("h2d_kspsolve") for r in rows)
    text = [
        "Times in seconds from PETSc's `-log_view`" + (" with `-log_view_gpu_time`" if gpu_cols else "") + ", each event summed over the run's stages. "
        "**KSPSolve**: the KSPSolve event, the iterations only (PETSc runs KSPSetUp and PCSetUp before that event starts). "
        "**PCSetUp**: the PCSetUp event (GAMG: coarsening and Galerkin products; PCMG on a DMDA: the level operators, interpolations and smoother setup). "
        "**total**: PCSetUp + KSPSolve. "
        f"**vs {ref}**: {ref}'s time divided by this type's (above 1: faster; none where either is under 1 ms). "
        "**MatMult**: the MatMult event over the whole run. "
        "**copies in KSPSolve**: host-to-GPU / GPU-to-host copies counted inside KSPSolve (`-log_view`'s CpuToGpu and GpuToCpu counts; "
        "- where PETSc has no CUDA). "
        "**convert**: building the type's storage from the assembled AIJ matrix (our types: the format's `*Convert` event at assembly; "
        "aijcusparse: MatCUSPARSCopyTo, at the first product; sellcuda: MatCUDACopyTo). "
        "**run**: `-log_view`'s Time (sec), the whole program after PetscInitialize (assembly, setup, solve). "
        "**its**: iterations. "
        "**residual**: the true residual norm ||b - Ax|| after the solve (`-ksp_view_final_residual`)."
    ]
    if any(r.get("total_def") == "SNESSolve" for r in rows):
        text.append(
            "The SNES cases (snes ex19, coo_newton) have columns of their own. **Newton**: Newton steps; **linear its**: the linear "
            "iterations summed over them; **residual**: the last SNES function norm. **assembly**: putting the Jacobian's values into "
            "the matrix, over all Newton steps: coo_newton's CooAssembly event (its MatSetValuesCOO call, the final assembly inside "
            "included; with GPU types the values are a device array), for ex19 MatAssemblyEnd (every assembly of the run: "
            "the colored finite-difference Jacobians of all PCMG levels, the interpolations). petsc-gpumats' types build or refill their format copy inside every final assembly, so "
            "their assembly includes most of their format column (which also counts builds outside it: after "
            "MatSetPreallocationCOO, of PCMG's interpolations); aijcusparse copies to the GPU at first use instead (device COO "
            "values it sets on the GPU inside MatSetValuesCOO). **format**: building or updating the "
            "type's own storage, over the run: our types' `<FORMAT>Convert` events (full conversions) plus `GpuMatsValues` "
            "(values-only refills); aijcusparse's MatCUSPARSCopyTo; sellcuda's MatCUDACopyTo; - for aij. **SNESSolve**: the "
            "whole Newton solve (function and Jacobian evaluations, PCSetUp, KSPSolve, line search). **Jacobian**: the "
            "SNESJacobianEval event (for coo_newton: computing the values on the host, their upload, the assembly, and "
            "at the first step MatSetPreallocationCOO). "
            f"**vs {ref}** as above."
        )
    return text


def cell(v, spec):
    x = number(v)
    return "-" if x is None else format(x, spec)


def seconds(v):
    """a time in seconds: 4 decimals, or 2 significant digits below 1 ms"""
    x = number(v)
    return "-" if x is None else format(x, ".4f") if x >= 1e-3 or x == 0 else format(x, ".1e")


def md_cell(text):
    return (text or "").replace("|", "\\|").replace("\n", " ")


def case_table(run, ref_rows, ref):
    """markdown lines of one case: one row per type, in run order. The linear cases and the SNES
    cases (total SNESSolve: ex19, coo-newton) have their own columns."""
    ok = lambda r: r["status"] == "ok"
    ref_row = next((r for r in ref_rows if r["type"] == ref and ok(r)), None)
    has = lambda key: any(number(r.get(key)) for r in run)

    def speedup(r, key):  # (none for times under a millisecond: PCSetUp of Jacobi takes microseconds)
        a = number(ref_row.get(key)) if ref_row else None
        b = number(r.get(key))
        return format(a / b, ".2f") if ok(r) and a and b and min(a, b) >= MIN_SPEEDUP_S else "-"

    def its(r):
        n = r.get("its") or "-"
        return f"{n} ({r['newton_its']} Newton)" if r.get("newton_its") else n

    def copies(r):
        h2d, d2h = number(r.get("h2d_kspsolve")), number(r.get("d2h_kspsolve"))
        return f"{h2d:.0f} / {d2h:.0f}" if h2d is not None and d2h is not None else "-"

    time = lambda key: lambda r: seconds(r.get(key))
    vs = lambda key: lambda r: speedup(r, key)
    # (header, right-aligned, cell of a row)
    if any(r.get("total_def") == "SNESSolve" for r in run):
        cols = [("Newton", True, lambda r: r.get("newton_its") or "-"), ("linear its", True, lambda r: r.get("its") or "-"),
                ("residual", True, lambda r: cell(r.get("residual"), ".3e")),
                ("assembly (s)", True, time("assembly_s")), (f"vs {ref}", True, vs("assembly_s")),
                ("format (s)", True, time("format_s")), (f"vs {ref}", True, vs("format_s")),
                ("KSPSolve (s)", True, time("ksp_solve_s")), (f"vs {ref}", True, vs("ksp_solve_s")),
                ("SNESSolve (s)", True, time("snes_solve_s")), (f"vs {ref}", True, vs("snes_solve_s")),
                ("PCSetUp (s)", True, time("pc_setup_s")), ("Jacobian (s)", True, time("jacobian_s")), ("MatMult (s)", True, time("matmult_s"))]
    else:
        cols = [("its", True, its), ("residual", True, lambda r: cell(r.get("residual"), ".3e")),
                ("KSPSolve (s)", True, time("ksp_solve_s")), (f"vs {ref}", True, vs("ksp_solve_s")),
                ("PCSetUp (s)", True, time("pc_setup_s")), (f"vs {ref}", True, vs("pc_setup_s")),
                ("total (s)", True, time("total_s")), ("MatMult (s)", True, time("matmult_s"))]
        cols += [(label, True, time(key)) for label, key in (("MatMultTranspose (s)", "matmulttranspose_s"), ("Jacobian (s)", "jacobian_s")) if has(key)]
    cols += [("copies in KSPSolve", True, copies)]
    if not any(r.get("total_def") == "SNESSolve" for r in run):
        cols += [("convert (s)", True, time("convert_s"))]
    cols += [("run (s)", True, lambda r: cell(r.get("run_s"), ".2f")),
             ("status", False, lambda r: r["status"] + (f": {r['note']}" if r.get("note") else ""))]
    out = ["| type | " + " | ".join(h for h, _, _ in cols) + " |", "|---|" + "|".join("---:" if right else "---" for _, right, _ in cols) + "|"]
    for r in run:
        out.append("| " + " | ".join(md_cell(str(c)) for c in [r["type"]] + [f(r) for _, _, f in cols]) + " |")
    return out


def report(rows, with_commands):
    raw, rows = rows, medians(rows)
    ref = reference(rows)
    cases = OrderedDict()
    for r in rows:
        cases.setdefault(r["case"], []).append(r)
    wrap = lambda line: textwrap.fill(line, 100, break_long_words=False, break_on_hyphens=False)
    text = [wrap("Solver benchmark: " + header_line(raw)), ""] + [line for c in caption(rows, ref) for line in (wrap(c), "")]
    notes = []
    for name, all_rows in cases.items():
        run = [r for r in all_rows if r["status"] != "skipped"]
        where = "every case" if name == "all" else name
        notes += [f"{r['type']}, {where}: {r.get('note') or 'not run'}" for r in all_rows if r["status"] == "skipped"]
        if not run:
            continue
        title = next((r["title"] for r in all_rows if r.get("title")), "")
        text += [wrap(f"**{name}**" + (f": {md_cell(title)}" if title else "")), ""]
        text += case_table(run, all_rows, ref) + [""]
        if with_commands:
            cmd = next((r["command"] for r in run if r.get("command")), "")
            if cmd:
                text += ["Command of the first type (the others differ in their type options):", "", "    " + cmd, ""]
    if notes:
        text += ["Not run:", ""] + [f"- {md_cell(n)}" for n in notes] + [""]
    return text


def summary(rows):
    """one line per case: the reference's iterations and KSPSolve, each other type's KSPSolve with its
    speedup, and each type's PCSetUp speedup (the full tables are report's)"""
    rows = medians(rows)
    ref = reference(rows)
    types = [t for t in distinct([r for r in rows if r["status"] != "skipped"], "type") if t != ref]
    cases = OrderedDict()
    for r in rows:
        if r["status"] != "skipped":
            cases.setdefault(r["case"], {})[r["type"]] = r
    ratio = lambda a, b: f"{a / b:.2f}x" if a and b and min(a, b) >= MIN_SPEEDUP_S else "-"
    head = ["case", "its", f"{ref} KSPSolve (s)"] + [f"{t} KSPSolve (s)" for t in types] + [f"{t} PCSetUp vs {ref}" for t in types]
    out = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    for case, by_type in cases.items():
        rr = by_type.get(ref)
        if not rr or rr["status"] != "ok":
            continue
        rk, rp = number(rr.get("ksp_solve_s")), number(rr.get("pc_setup_s"))
        its = {by_type[t].get("its") for t in [ref] + types if t in by_type and by_type[t]["status"] == "ok"}
        cells = [case, rr.get("its") or "-" if len(its) == 1 else "differ: " + ", ".join(f"{t} {by_type[t].get('its')}" for t in [ref] + types if t in by_type),
                 seconds(rr.get("ksp_solve_s"))]
        for t in types:
            r = by_type.get(t)
            cells.append(f"{seconds(r.get('ksp_solve_s'))} ({ratio(rk, number(r.get('ksp_solve_s')))})" if r and r["status"] == "ok" else (r or {}).get("status", "-"))
        for t in types:
            r = by_type.get(t)
            cells.append(ratio(rp, number(r.get("pc_setup_s"))) if r and r["status"] == "ok" else "-")
        out.append("| " + " | ".join(md_cell(str(c)) for c in cells) + " |")
    return out


def cmd_summary(args):
    rows = [r for path in args.csv for r in read_rows(path)]
    if not rows:
        sys.exit("solverbench_report: the CSV holds no results")
    sys.stdout.write("\n".join(summary(rows)) + "\n")
    return 0


def replace_block(path, block):
    try:
        with open(path) as f:
            old = f.read()
    except OSError as e:
        sys.exit(f"solverbench_report: cannot read {path}: {e.strerror}")
    b, e = old.find(BEGIN), old.find(END)
    if b < 0 or e < b:
        sys.exit(f"solverbench_report: {path} has no '{BEGIN}' ... '{END}' block to replace")
    new = old[: b + len(BEGIN)] + "\n" + "\n".join(block).rstrip("\n") + "\n" + old[e:]
    with open(path, "w") as f:
        f.write(new)


def cmd_report(args):
    rows = read_rows(args.csv)
    if not rows:
        sys.exit("solverbench_report: the CSV holds no results")
    md = "\n".join(report(rows, with_commands=True)).rstrip("\n") + "\n"
    if args.md:
        with open(args.md, "w") as f:
            f.write(md)
    else:
        sys.stdout.write(md)
    if args.readme:
        block = report(rows, with_commands=False)
        if args.link:
            block += [f"Generated by `examples/solverbench.sh` (`make solver-bench`) from [{os.path.splitext(args.link)[0]}.csv]"
                      f"({os.path.splitext(args.link)[0]}.csv); with the command of each case: [{args.link}]({args.link})."]
        replace_block(args.readme, block)
        print(f"solverbench_report: replaced the solver benchmark block of {args.readme}", file=sys.stderr)
    return 0


def main(argv=None):
    p = argparse.ArgumentParser(description="CSV rows and markdown tables of the petsc-gpumats solver benchmark")
    sub = p.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("add", help="parse one run's output and append its row to CSV")
    a.add_argument("csv")
    a.add_argument("--log", required=True)
    a.add_argument("--case", required=True)
    a.add_argument("--type", required=True)
    a.add_argument("--rc", type=int, required=True)
    a.add_argument("--wall", type=float, default=None)
    a.add_argument("--timeout", type=float, default=None)
    a.add_argument("--title")
    a.add_argument("--total", choices=("ksp", "snes"), default="ksp")
    a.add_argument("--fixed-its", action="store_true", help="the case stops at -ksp_max_it on purpose: DIVERGED_ITS is no failure")
    a.add_argument("--command")
    a.add_argument("--rep", type=int, default=1, help="which repetition of the case with this type (SOLVERBENCH_REPEAT)")
    a.add_argument("--meta", action="append", metavar="KEY=VALUE")
    s = sub.add_parser("skip", help="append a row for a run that was not made")
    s.add_argument("csv")
    s.add_argument("--case", required=True)
    s.add_argument("--type", required=True)
    s.add_argument("--note", required=True)
    s.add_argument("--title")
    s.add_argument("--meta", action="append", metavar="KEY=VALUE")
    r = sub.add_parser("report", help="markdown tables from the CSV")
    r.add_argument("csv")
    r.add_argument("--md", metavar="FILE")
    r.add_argument("--readme", metavar="FILE", help=f"also replace the block between {BEGIN} and {END} in FILE")
    r.add_argument("--link", metavar="PATH", help="the full report, linked from the README block")
    m = sub.add_parser("summary", help="one markdown line per case: KSPSolve and PCSetUp against the reference, from one or more CSVs")
    m.add_argument("csv", nargs="+")
    args = p.parse_args(argv)
    return {"add": cmd_add, "skip": cmd_skip, "report": cmd_report, "summary": cmd_summary}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
