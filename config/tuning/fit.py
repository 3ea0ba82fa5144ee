#!/usr/bin/env python3
"""Fits autocuda's execution-time model to benchmark measurements, one calibration per GPU model,
and writes src/mat/impls/auto/model.hpp.

    python3 config/tuning/fit.py config/tuning/autocuda-*.csv > src/mat/impls/auto/model.hpp

Input: CSVs that examples/bench.cu writes (-csv), each from runs of its generated families
(poisson7, poisson27, block3, random4, random16, powerlaw) on one GPU (config/tuning/tune.sh,
`make tune`). The model, per kernel:

    t = max(bytes / (efficiency * copy bandwidth), us_per_step * critical steps)

- efficiency: the fraction of the run's copy bandwidth at which the kernel streams its own bytes
  (the format's footprint plus x and y), averaged over the families of each column class: banded
  (poisson7, poisson27, block3: the columns of a SELL-P slice column stay within 2^16) and
  scattered (random4, random16); powerlaw is left out, its time is set by its longest row;
- us_per_step: the powerlaw time divided by the critical steps of its longest work item (the
  family's generator caps rows at 1000 entries): 1000/t steps for SELL-P with t threads per row,
  ceil(1000/32) for CMRS (a warp's strip), 1000/c for BELLPACK.
- build_ns_per_nnz: what building the format costs beyond cuSPARSE CSR built the same way, per
  nonzero, the median over the families: each run's convert_ms (MatConvert from host AIJ and the
  first product) less that of autocuda restricted to CSR (the row autocuda:csr, `-csr_mat_autocuda_
  formats csr`), so the upload and PETSc's host work, common to both, cancel. CSR's own is 0;
  without an autocuda:csr row every format's is 0 (no build costs measured).
  Where a matrix is rebuilt after few products (a new pattern at every assembly), autocuda counts
  this cost against the format, spread over the products each build served.
Which format a type measures: cusparse-csr-alg1 -> csr, cmrscuda, sellpcuda, bellpackcuda. Rows
of option variants that autocuda never uses (cached matrix loads, the modified CMRS layout) are
left out; efficiencies count each row's own bytes, whatever its index form.

The calibrations are written with that of config/tuning/default-gpu first, the others by GPU name
(gpus.py); where none names the GPU a matrix is on, autocuda uses the first (calibration.hpp says
so in -mat_view).
"""
import csv
import re
import statistics
import sys

from gpus import ordered

CLASS = {"poisson7": "banded", "poisson27": "banded", "block3": "banded", "random4": "scattered", "random16": "scattered"}
LONGEST_POWERLAW_ROW = 1000  # examples/bench.cu: powerlaw row lengths are capped at 1000
FORMATS = {"cusparse-csr-alg1": "csr", "cmrscuda": "cmrs", "sellpcuda": "sellp", "bellpackcuda": "bellpack", "autocuda:csr": "csr"}


def family(name):
    return name.split()[0]


def steps(fmt, params):
    if fmt == "sellp":
        t = int(re.search(r"(\d+) threads per row", params).group(1))
        return -(-LONGEST_POWERLAW_ROW // t)
    if fmt == "cmrs":
        return -(-LONGEST_POWERLAW_ROW // 32)
    if fmt == "bellpack":
        c = int(re.search(r"block size \d+x(\d+)", params).group(1))
        return -(-LONGEST_POWERLAW_ROW // c)
    return 0


def calibration(path):
    """(gpu, date, copy bandwidth GB/s, {format: (banded, scattered, us_per_step, build_ns_per_nnz)}) of one CSV"""
    variant = ("cached matrix loads", "modified layout")
    rows = [r for r in csv.DictReader(open(path)) if r["status"] == "ok" and r["type"] in FORMATS and not any(v in r["params"] for v in variant)]
    timed = [r for r in rows if r["type"] != "autocuda:csr"]
    if not rows:
        sys.exit("fit.py: %s has no measurement of cuSPARSE CSR ALG1, cmrscuda, sellpcuda or bellpackcuda" % path)
    gpus = {r["gpu"] for r in rows}
    if len(gpus) != 1:
        sys.exit("fit.py: %s mixes GPUs (%s): one file per GPU model" % (path, ", ".join(sorted(gpus))))
    eff = {}
    step = {}
    copy = []
    convert = {}  # family -> {format: (convert ms, nnz)}, "csr" from the autocuda:csr row
    for r in rows:
        if r["type"] != "cusparse-csr-alg1":
            convert.setdefault(family(r["matrix"]), {})[FORMATS[r["type"]]] = (float(r["convert_ms"]), int(r["nnz"]))
    build = {}
    for fam, by in convert.items():
        if "csr" not in by:
            continue
        base = by["csr"][0]
        for f, (ms, nnz) in by.items():
            if f != "csr":
                build.setdefault(f, []).append(max(0.0, ms - base) * 1e6 / nnz)
    for r in timed:
        fmt, fam = FORMATS[r["type"]], family(r["matrix"])
        n = int(r["rows"])
        t = float(r["time_us"])
        bw = float(r["copy_gbs"])
        copy.append(bw)
        if fam in CLASS:
            streamed = float(r["format_mb"]) * 1e6 + 16.0 * n  # the format's arrays, x once, y once
            eff.setdefault((fmt, CLASS[fam]), []).append(streamed / (t * 1e-6) / (bw * 1e9))
        elif fam == "powerlaw" and fmt != "csr":
            step[fmt] = t / steps(fmt, r["params"])
    kernels = {}
    for fmt in ["csr", "cmrs", "sellp", "bellpack"]:
        def mean(cls):
            v = eff.get((fmt, cls), [])
            return sum(v) / len(v) if v else 0.5
        kernels[fmt] = (mean("banded"), mean("scattered"), step.get(fmt, 0.0), statistics.median(build[fmt]) if build.get(fmt) else 0.0)
    return rows[0]["gpu"], rows[0]["date"][:10], sum(copy) / len(copy), kernels


def main(paths):
    if not paths:
        sys.exit("usage: fit.py autocuda-<gpu>.csv... > src/mat/impls/auto/model.hpp")
    both = ordered([(p, calibration(p)) for p in paths], lambda pc: pc[1][0])
    paths = [p for p, _ in both]
    cals = [c for _, c in both]
    names = [c[0] for c in cals]
    if len(set(names)) != len(names):
        sys.exit("fit.py: two files measure the same GPU model: keep one per GPU")
    out = []
    out.append("// autocuda's execution-time model, one calibration per GPU model, generated by")
    out.append("// config/tuning/fit.py from %s" % ", ".join("config/tuning/" + p.split("/")[-1] for p in paths))
    out.append("// (examples/bench.cu on each GPU: config/tuning/tune.sh); do not edit by hand.")
    out.append("//")
    out.append("//   t = max(bytes / (efficiency * copy bandwidth), us_per_step * critical steps)")
    out.append("//   (+ build_ns_per_nnz * nnz / products per build, for a matrix rebuilt after few products)")
    out.append("//")
    out.append("// bytes: FormatOperator::estimate's bytes (the format's arrays, x and y); critical steps:")
    out.append("// its steps (the longest work item); efficiency: the fraction of the copy")
    out.append("// bandwidth each kernel streamed its own bytes at, for banded and for scattered columns.")
    out.append("#pragma once")
    out.append("")
    out.append("namespace gpumats {")
    out.append("namespace autosel {")
    out.append("")
    out.append("struct KernelModel {")
    out.append("  const char *format; // \"csr\", \"cmrs\", \"sellp\", \"bellpack\"")
    out.append("  double      banded, scattered, us_per_step;")
    out.append("  double      build_ns_per_nnz; // building it beyond CSR's build (autocuda restricted to CSR), per nonzero")
    out.append("};")
    out.append("")
    out.append("struct Calibration {")
    out.append("  const char *gpu;  // the name CUDA gives the GPU model it was measured on")
    out.append("  const char *date; // of the measurement")
    out.append("  double      copy_gbs;")
    out.append("  KernelModel kernels[4];")
    out.append("};")
    out.append("")
    out.append("constexpr Calibration kCalibrations[] = {")
    for gpu, date, gbs, kernels in cals:
        out.append('  {"%s", "%s", %.1f,' % (gpu, date, gbs))
        out.append("   {")
        for fmt in ["csr", "cmrs", "sellp", "bellpack"]:
            b, s, u, c = kernels[fmt]
            out.append('     {"%s", %.3f, %.3f, %.4f, %.3f},' % (fmt, b, s, u, c))
        out.append("   }},")
    out.append("};")
    out.append("// cuSPARSE CSR stays unless another format promises this much more")
    out.append("constexpr double kPreferCsrUnlessGain = 1.05;")
    out.append("")
    out.append("} // namespace autosel")
    out.append("} // namespace gpumats")
    print("\n".join(out))


if __name__ == "__main__":
    main(sys.argv[1:])
