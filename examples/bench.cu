/*
   bench - petsc-gpumats MatMult benchmark: one matrix, several Mat types, one GPU, double precision.

   Synopsis:
     build/bin/bench [-matrix poisson7|poisson27|block3|random4|random16|powerlaw|shuffled7] [-n <int>]
                     [-f <file>] [-types <type,type,...>] [-warmup <10>] [-reps <100>]
                     [-baselines <true>] [-transpose <true>] [-copy_mib <1024>] [-check_tol <1e-12>] [-csv <file>]
                     [-mat_cmrs_* / -mat_sellp_* / -mat_bellpack_* / -mat_cusparse_* options]
     make bench BENCH_ARGS="-matrix block3 -csv results.csv"

   Builds (or reads) one square SeqAIJ matrix A and a deterministic vector x, then times y = A x
   on one GPU:
     - every Mat type of -types: B = MatConvert(A, type), MatSetFromOptions(B), vectors from
       MatCreateVecs(B) (CUDA vectors for CUDA types), -warmup untimed then -reps timed MatMult()
       calls between two CUDA events; the time per call is the mean. A type that cannot be
       converted (unknown here, no CUDA in this PETSc, ...) is reported as skipped with the first
       line of PETSc's error message; the run goes on. sellcuda is converted through seqsell
       (MatConvert(A, seqsell), then MatConvert(.., sellcuda, MAT_INPLACE_MATRIX)): PETSc has no
       direct converter, and its fallback, MatConvert_Basic, is far too slow for large matrices;
     - raw cuSPARSE on the same CSR, uploaded once (-baselines): cusparseSpMV with
       CUSPARSE_SPMV_CSR_ALG1 and CUSPARSE_SPMV_CSR_ALG2 (32-bit indices, CUDA_R_64F, with
       cusparseSpMV_preprocess where cuSPARSE has it, as aijcusparse does) and, for a matrix with
       block size > 1, cusparseDbsrmv on a BSR copy built on the host (explicit zeros fill partial
       blocks). Rows "cusparse-csr-alg1", "cusparse-csr-alg2", "cusparse-bsr";
     - a copy kernel y[i] = x[i] (double2 loads and stores, -copy_mib MiB per buffer): its
       bandwidth B = (bytes read + written) / time is the reference of eta+;
     - y = A^T x (-transpose), timed the same way with MatMultTranspose() (the columns "A^T"):
       for our types the implicit product (-mat_gpumats_transpose implicit: atomics over the stored
       copy) and the explicit one (-mat_gpumats_transpose explicit: a transposed copy in the
       format, whose build is the first call's time less one product's); for aijcusparse PETSc's
       own two paths, without and with MAT_FORM_EXPLICIT_TRANSPOSE (cuSPARSE's transposed SpMV;
       a transposed CSR built by cuSPARSE); for cusparse-csr-alg1 cusparseSpMV with
       CUSPARSE_OPERATION_TRANSPOSE (in the "impl" column). Checked against MatMultTranspose of A
       on the host. These decide what -mat_gpumats_transpose auto does (src/mat/impls/common/operator/format_operator.hpp,
       TransposeMode).

   Matrices (-matrix; -n as noted; values are hash-based, so deterministic and the same on every
   machine; off-diagonal entries are nonzero and every row is strictly diagonally dominant,
   a_ii = 1 + sum_j |a_ij|):
+  poisson7  - 7-point stencil on an n^3 grid (default n = 160: 4.1M rows, 6.96 nnz/row);
               a_ij = -(0.5 + h(i,j)) with h in [0,1) symmetric in i,j
.  poisson27 - 27-point stencil on an n^3 grid (default n = 100: 1M rows, 26.5 nnz/row), values as poisson7
.  block3    - 3 unknowns per node of an n^3 grid coupled by a 27-point node stencil: dense 3x3
               blocks, block size 3 (default n = 64: 786K rows, 78.5 nnz/row); a_ij in [-1,1), symmetric
.  random4   - n rows (default 4,000,000): the diagonal and 3 distinct uniformly random columns; a_ij in [-1,1)
.  random16  - n rows (default 2,000,000): the diagonal and 15 distinct uniformly random columns
-  powerlaw  - n rows (default 2,000,000) whose lengths L (diagonal included) follow a discrete
               power law: L = min(1000, n, floor(1.75 u^(-2/3))) with u uniform in (0,1], i.e.
               P(L >= k) = (1.75/k)^1.5 for 2 <= k <= 1000 (density ~ k^-2.5); mean 4.59, median 2,
               90th percentile 8, 99th 37, about 0.007% of the rows at the cap of 1000. Columns: the
               diagonal and L-1 distinct uniformly random ones, so only the row lengths differ from random4
.  shuffled7 - poisson7 (default n = 160) with rows and columns renumbered by one random
               permutation, as a mesh numbered without regard to locality: the case for
               -mat_gpumats_reorder rcm
   -f <file> reads a matrix instead: *.mtx Matrix Market (coordinate real/integer/pattern,
   general/symmetric/skew-symmetric; duplicates are summed), anything else PETSc binary (MatLoad;
   -matload_block_size sets its block size).

   Options:
+  -types <list>      - Mat types, default aijcusparse,sellcuda,cmrscuda,sellpcuda,bellpackcuda,autocuda.
                        aijcusparse runs first whatever its place: its y is the reference of every check.
                        A type may carry a variant tag, type:tag; that matrix then reads its options
                        with the prefix tag_, so one run compares parameter settings, e.g.
                        -types aijcusparse,cmrscuda:h4,cmrscuda:h8 -h4_mat_cmrs_height 4 -h8_mat_cmrs_height 8
.  -warmup <10>       - untimed MatMult() calls before the timed ones
.  -reps <100>        - timed MatMult() calls per type
.  -baselines <true>  - also time raw cuSPARSE
.  -transpose <true>  - also time MatMultTranspose (implicit, explicit and the explicit copy's build)
.  -copy_mib <1024>   - size of each buffer of the copy kernel, MiB
.  -check_tol <1e-12> - the largest max|y - yref| / max|yref| that passes
.  -constant_values <false> - generated matrices with every off-diagonal entry -1: a few distinct
                        values, as a constant-coefficient stencil has (SELL-P's -mat_sellp_values dictionary)
-  -csv <file>        - append one row per type (a header line first if the file is new or empty);
                        examples/bench_report.py turns such files into tables and plots

   Columns: time per MatMult (us); GB/s = beta+ / time with beta+ = 12 nnz + 4 (n+1) + 16 n bytes
   (the useful bytes of the CMRS paper with CSR's 32-bit indices: the same for every type, so the
   column compares formats, not their footprints); eta+ = (beta+/time) / B; GFlop/s = 2 nnz / time;
   speedup = t(aijcusparse) / t; convert = MatConvert() + MatSetFromOptions() + the first
   MatMult() (ms; for the cuSPARSE rows: upload + setup + first SpMV); format = the format's own
   bytes (from -mat_view ::ascii_info for our types; the CSR or BSR arrays for cuSPARSE); fill =
   stored entries / nonzeros; check = ok when max|y - yref| / max|yref| <= -check_tol, where yref
   is aijcusparse's y (cusparse-csr-alg1's without aijcusparse, host MatMult's without both);
   the reference itself is checked against MatMult() of A on the host (its check column says "ref"). parameters = what the type
   chose (from -mat_view ::ascii_info). A^T impl / expl = time per MatMultTranspose (us) on the
   implicit and the explicit path; build = the explicit copy's build (ms); chk = both within
   -check_tol of A^T x on the host. In the CSV: transpose_implicit_us, transpose_explicit_us,
   transpose_build_ms, transpose_check, transpose_rel_diff, the last columns of a row.

   Timing: the events are recorded on the stream PETSc's GPU work uses (PETSc's current device
   context, which is the default NULL stream unless -device_context_stream_type says otherwise;
   with a PETSc without CUDA, the NULL stream). Do not time with -log_view: PETSc then synchronises
   around GPU kernels.

   Exit status: 0 when every type that ran passed its check (also when types were skipped), 1 when
   a check failed or a type failed after converting, 2 when no CUDA GPU is usable; a PETSc error
   code for bad options or input.

   Notes: with a PETSc without CUDA the program still builds and runs: aijcusparse and sellcuda are
   skipped and our *cuda types stage vectors through the GPU on every MatMult (slow: not a
   benchmark of the formats). Build this program with the CUDA toolkit PETSc was built with.

   Examples:
     build/bin/bench                                          (poisson7, n = 160)
     build/bin/bench -matrix block3 -csv h200.csv
     build/bin/bench -matrix powerlaw -types aijcusparse,cmrscuda -mat_cmrs_height 4
     build/bin/bench -matrix poisson7 -n 160 -types aijcusparse,cmrscuda -mat_cmrs_spmv shared   (CMRS's product kernels: examples/cmrs_variants.sh)
     build/bin/bench -f matrix.mtx -reps 200 -csv h200.csv
     build/bin/bench -matrix poisson27 -types aijcusparse,cmrscuda,sellpcuda,bellpackcuda,autocuda -csv transpose.csv
     python3 examples/bench_report.py h200.csv --md h200.md --png h200.png
     SELL-P's value dictionary against plain values (32- and 16-bit columns) on a constant-coefficient stencil:
     build/bin/bench -matrix poisson7 -constant_values -types aijcusparse,sellpcuda,sellpcuda:i16,sellpcuda:dict,sellpcuda:dict16,sellpcuda:dictsh16 \
       -i16_mat_sellp_index auto -dict_mat_sellp_values dictionary -dict16_mat_sellp_values dictionary -dict16_mat_sellp_index auto \
       -dictsh16_mat_sellp_values dictionary -dictsh16_mat_sellp_index auto -dictsh16_mat_sellp_dictionary_shared -csv dict.csv
*/

static char help[] = "petsc-gpumats MatMult benchmark on one GPU: one matrix, several Mat types and raw cuSPARSE.\n"
                     "  -matrix poisson7|poisson27|block3|random4|random16|powerlaw|shuffled7  -n <int>  -f <file.mtx|petsc-binary>\n"
                     "  -types <type,...>  -warmup <int>  -reps <int>  -baselines <bool>  -transpose <bool>  -copy_mib <int>  -check_tol <real>  -csv <file>  -constant_values <bool>\n"
                     "  and -mat_cmrs_*, -mat_sellp_*, -mat_bellpack_*, -mat_cusparse_* options (see the top of examples/bench.cu)\n\n";

#include <petscmat.h>
#include <petsctime.h>
#include <petscgpumats.h>
#if defined(PETSC_HAVE_CUDA)
  #include <petscdevice.h>
#endif

#include <cuda_runtime.h>
#include <cusparse.h>
#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

/* PETSc before 3.19 returned a plain 0 for success; PETSC_INT_MAX replaced PETSC_MAX_INT later */
#if PETSC_VERSION_LT(3, 19, 0)
  #define PETSC_SUCCESS 0
#endif
#if !defined(PETSC_INT_MAX)
  #define PETSC_INT_MAX PETSC_MAX_INT
#endif

#include "mmread.h"

/* PETSc's PetscCallCUDA/PetscCallCUSPARSE exist only in CUDA builds of recent PETSc: our own, which
   turn a failed call into a PETSc error naming the call (so that a type or baseline that fails is
   reported, under PetscReturnErrorHandler, instead of aborting the run). */
#define BenchCallCUDA(call) \
  do { \
    cudaError_t bench_err_ = (call); \
    if (bench_err_ != cudaSuccess) { \
      (void)cudaGetLastError(); /* clear a non-sticky error so that later calls start clean */ \
      SETERRQ(PETSC_COMM_SELF, bench_err_ == cudaErrorMemoryAllocation ? PETSC_ERR_MEM : PETSC_ERR_LIB, "%s failed: %s (%s)", #call, cudaGetErrorString(bench_err_), \
              cudaGetErrorName(bench_err_)); \
    } \
  } while (0)
#define BenchCallCUSPARSE(call) \
  do { \
    cusparseStatus_t bench_st_ = (call); \
    PetscCheck(bench_st_ == CUSPARSE_STATUS_SUCCESS, PETSC_COMM_SELF, bench_st_ == CUSPARSE_STATUS_ALLOC_FAILED ? PETSC_ERR_MEM : PETSC_ERR_LIB, "%s failed: %s", #call, \
               cusparseGetErrorString(bench_st_)); \
  } while (0)

#define MAX_TYPES 32
#define MSG_LEN   1024

/* ----------------------------------------------------------------------------------------------
   Hash-based values: the same matrix and vector on every machine, without a stateful RNG, so that
   any row can be generated on its own (twice: once for its length, once for its entries).
   ---------------------------------------------------------------------------------------------- */

static inline uint64_t Mix(uint64_t z) /* splitmix64's finaliser */
{
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
static inline uint64_t Key(uint64_t salt, uint64_t a, uint64_t b) { return Mix(salt ^ Mix(a ^ Mix(b))); }
static inline double   Unit(uint64_t key) { return (double)(key >> 11) * 0x1.0p-53; } /* [0,1) */

enum : uint64_t { kSaltValue = 0x5eed0001, kSaltColumn = 0x5eed0002, kSaltLength = 0x5eed0003, kSaltX = 0x5eed0004 };

/* x_j in [0.5, 1.5): no zeros, no cancellation between the entries of a row that is worth the name */
static inline double XValue(PetscInt j) { return 0.5 + Unit(Key(kSaltX, (uint64_t)j, 0)); }

/* ----------------------------------------------------------------------------------------------
   The generated families. Each is a row generator: length(r), and fill(r, cols, vals) writing
   length(r) ascending columns and their values. BuildCSR calls length for every row, allocates
   once, then fill: no MatSetValues, no reallocation, no sorting of the whole matrix.
   ---------------------------------------------------------------------------------------------- */

/* -constant_values: every off-diagonal entry -1 (so a diagonal 1 + its row's count), as a
   constant-coefficient stencil (PETSc's ksp ex45) has: a handful of distinct values, the case of
   SELL-P's value dictionary (-mat_sellp_values dictionary). Set once, before the matrix is built. */
static bool g_constant_values = false;

/* Stencil on an n^3 grid with dof unknowns per node: 7-point or 27-point node stencil, dense
   dof x dof coupling between neighbouring nodes. */
struct StencilGen {
  PetscInt n, dof;
  bool     full; /* 27-point (true) or 7-point */
  bool     poisson; /* values -(0.5 + h) (Laplacian-like) or in [-1,1) */

  PetscInt Nodes1D(PetscInt c) const { return 1 + (c > 0) + (c < n - 1); }
  PetscInt length(PetscInt r) const
  {
    const PetscInt node = r / dof, x = node % n, y = (node / n) % n, z = node / (n * n);
    if (full) return Nodes1D(x) * Nodes1D(y) * Nodes1D(z) * dof;
    return (1 + (x > 0) + (x < n - 1) + (y > 0) + (y < n - 1) + (z > 0) + (z < n - 1)) * dof;
  }
  double OffDiag(PetscInt r, PetscInt c) const
  {
    if (g_constant_values) return -1.0;
    const double h = Unit(Key(kSaltValue, (uint64_t)PetscMin(r, c), (uint64_t)PetscMax(r, c))); /* symmetric */
    return poisson ? -(0.5 + h) : 2.0 * h - 1.0;
  }
  void fill(PetscInt r, PetscInt *cols, PetscScalar *vals) const
  {
    const PetscInt node = r / dof, x = node % n, y = (node / n) % n, z = node / (n * n);
    PetscInt       k = 0, diag = -1;
    double         sum = 0;

    /* offsets in (dz, dy, dx) lexicographic order give ascending columns */
    for (PetscInt dz = -1; dz <= 1; dz++)
      for (PetscInt dy = -1; dy <= 1; dy++)
        for (PetscInt dx = -1; dx <= 1; dx++) {
          if (!full && (dx != 0) + (dy != 0) + (dz != 0) > 1) continue;
          if (x + dx < 0 || x + dx >= n || y + dy < 0 || y + dy >= n || z + dz < 0 || z + dz >= n) continue;
          const PetscInt m = node + dz * n * n + dy * n + dx;
          for (PetscInt c = 0; c < dof; c++, k++) {
            cols[k] = m * dof + c;
            if (cols[k] == r) {
              diag = k;
              continue;
            }
            vals[k] = OffDiag(r, cols[k]);
            sum += std::fabs(vals[k]);
          }
        }
    vals[diag] = 1.0 + sum;
  }
};

/* The diagonal and L-1 distinct uniformly random columns of row r, ascending */
static void RandomColumns(PetscInt r, PetscInt n, PetscInt L, PetscInt *cols)
{
  PetscInt have = 0;
  uint64_t draw = 0;

  cols[have++] = r;
  while (have < L) {
    while (have < L) cols[have++] = (PetscInt)(((Mix(Key(kSaltColumn, (uint64_t)r, draw++)) >> 32) * (uint64_t)n) >> 32);
    std::sort(cols, cols + have);
    have = (PetscInt)(std::unique(cols, cols + have) - cols); /* a repeated column is drawn again */
  }
}

/* random4, random16 (fixed length k) and powerlaw (k = 0: the power-law length of the header) */
struct RandomGen {
  PetscInt n, k;

  static constexpr double   kScale = 1.75, kExponent = 2.0 / 3.0; /* L = floor(1.75 u^(-1/(alpha-1))), alpha = 2.5 */
  static constexpr PetscInt kMaxLength = 1000;

  PetscInt length(PetscInt r) const
  {
    if (k) return PetscMin(k, n);
    const double u = 1.0 - Unit(Key(kSaltLength, (uint64_t)r, 0)); /* (0,1] */
    const double L = std::floor(kScale * std::pow(u, -kExponent));
    return (PetscInt)std::min<double>({L, (double)kMaxLength, (double)n});
  }
  void fill(PetscInt r, PetscInt *cols, PetscScalar *vals) const
  {
    const PetscInt L    = length(r);
    double         sum  = 0;
    PetscInt       diag = 0;

    RandomColumns(r, n, L, cols);
    for (PetscInt q = 0; q < L; q++) {
      if (cols[q] == r) {
        diag = q;
        continue;
      }
      vals[q] = g_constant_values ? -1.0 : 2.0 * Unit(Key(kSaltValue, (uint64_t)r, (uint64_t)cols[q])) - 1.0;
      sum += std::fabs(vals[q]);
    }
    vals[diag] = 1.0 + sum;
  }
};

/* shuffled7: poisson7 with rows and columns renumbered by one random permutation, as a mesh
   numbered without regard to locality would be. Row r is row old[r] of poisson7 with every column
   c renamed to inv[c]; the reordering options (-mat_gpumats_reorder rcm) are measured on it. */
struct ShuffledGen {
  StencilGen            base;
  std::vector<PetscInt> old, inv; /* new -> old, old -> new */

  explicit ShuffledGen(PetscInt n) : base{n, 1, false, true}
  {
    const PetscInt N = n * n * n;
    old.resize((size_t)N);
    inv.resize((size_t)N);
    for (PetscInt r = 0; r < N; r++) old[(size_t)r] = r;
    for (PetscInt r = N - 1; r > 0; r--) std::swap(old[(size_t)r], old[(size_t)((Mix(Key(kSaltColumn, (uint64_t)r, 7)) >> 11) % (uint64_t)(r + 1))]);
    for (PetscInt r = 0; r < N; r++) inv[(size_t)old[(size_t)r]] = r;
  }
  PetscInt length(PetscInt r) const { return base.length(old[(size_t)r]); }
  void     fill(PetscInt r, PetscInt *cols, PetscScalar *vals) const
  {
    const PetscInt                              L = length(r);
    std::vector<std::pair<PetscInt, PetscScalar>> e((size_t)L);
    base.fill(old[(size_t)r], cols, vals);
    for (PetscInt q = 0; q < L; q++) e[(size_t)q] = {inv[(size_t)cols[q]], vals[q]};
    std::sort(e.begin(), e.end());
    for (PetscInt q = 0; q < L; q++) cols[q] = e[(size_t)q].first, vals[q] = e[(size_t)q].second;
  }
};

/* The CSR arrays of a generated or Matrix Market matrix; A uses them in place (no copy), so they
   live until A is destroyed. */
struct HostCSR {
  PetscInt     n = 0;
  PetscInt    *i = nullptr, *j = nullptr;
  PetscScalar *a = nullptr;
};

static PetscErrorCode FreeCSR(HostCSR *csr)
{
  PetscFunctionBeginUser;
  PetscCall(PetscFree(csr->i));
  PetscCall(PetscFree(csr->j));
  PetscCall(PetscFree(csr->a));
  csr->n = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* cuSPARSE gets 32-bit indices: nnz must fit, whatever PetscInt is */
static PetscErrorCode CheckIndexRange(double rows, double nnz, const char *what)
{
  PetscFunctionBeginUser;
  PetscCheck(nnz <= (double)INT32_MAX && rows < (double)INT32_MAX && nnz <= (double)PETSC_INT_MAX, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE,
             "%s: %.0f rows, %.0f nonzeros exceed the 32-bit indices of the benchmark (cuSPARSE baselines and beta+); use a smaller -n", what, rows, nnz);
  PetscFunctionReturn(PETSC_SUCCESS);
}

template <class Gen>
static PetscErrorCode BuildCSR(const Gen &g, PetscInt n, const char *what, HostCSR *csr)
{
  double nnz = 0;

  PetscFunctionBeginUser;
  csr->n = n;
  PetscCall(PetscMalloc1(n + 1, &csr->i));
  csr->i[0] = 0;
  for (PetscInt r = 0; r < n; r++) {
    const PetscInt L = g.length(r);
    nnz += (double)L;
    if (nnz > (double)INT32_MAX) break; /* reported below, before i overflows */
    csr->i[r + 1] = csr->i[r] + L;
  }
  PetscCall(CheckIndexRange((double)n, nnz, what));
  PetscCall(PetscMalloc1(csr->i[n], &csr->j));
  PetscCall(PetscMalloc1(csr->i[n], &csr->a));
  for (PetscInt r = 0; r < n; r++) g.fill(r, csr->j + csr->i[r], csr->a + csr->i[r]);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ----------------------------------------------------------------------------------------------
   Matrix Market: read into COO by examples/mmread.h, then counting sort by row, sort each row by
   column, sum duplicates.
   ---------------------------------------------------------------------------------------------- */

static PetscErrorCode ReadMatrixMarket(const char *file, HostCSR *csr)
{
  MMData mm = {file, 0, 0, 0, nullptr, nullptr, nullptr};

  PetscFunctionBeginUser;
  PetscCall(MMRead(&mm));
  PetscCheck(mm.M == mm.N, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "Matrix Market file %s holds a %" PetscInt_FMT " x %" PetscInt_FMT " matrix; the benchmark needs a square one", file,
             mm.M, mm.N);
  PetscCall(CheckIndexRange((double)mm.M, (double)mm.n, file));

  const PetscInt        M  = mm.M;
  const size_t          ne = (size_t)mm.n;
  std::vector<PetscInt> start((size_t)M + 1, 0), order(ne);
  for (size_t k = 0; k < ne; k++) start[(size_t)mm.i[k] + 1]++;
  for (PetscInt r = 0; r < M; r++) start[(size_t)r + 1] += start[(size_t)r];
  {
    std::vector<PetscInt> next(start.begin(), start.end() - 1);
    for (size_t k = 0; k < ne; k++) order[(size_t)next[(size_t)mm.i[k]]++] = (PetscInt)k;
  }
  csr->n = M;
  PetscCall(PetscMalloc1(M + 1, &csr->i));
  PetscCall(PetscMalloc1(ne, &csr->j));
  PetscCall(PetscMalloc1(ne, &csr->a));
  csr->i[0] = 0;
  PetscInt out = 0;
  for (PetscInt r = 0; r < M; r++) {
    PetscInt *b = order.data() + start[(size_t)r], *e = order.data() + start[(size_t)r + 1];
    std::sort(b, e, [&](PetscInt p, PetscInt q) { return mm.j[p] < mm.j[q]; });
    for (PetscInt *p = b; p < e; p++) {
      if (out > csr->i[r] && csr->j[out - 1] == mm.j[*p]) csr->a[out - 1] += mm.v[*p]; /* duplicate: summed */
      else csr->j[out] = mm.j[*p], csr->a[out++] = mm.v[*p];
    }
    csr->i[r + 1] = out;
  }
  PetscCall(MMFree(&mm));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ----------------------------------------------------------------------------------------------
   Errors and small helpers
   ---------------------------------------------------------------------------------------------- */

/* First line of the message of the error most recently raised (code is what the call returned) */
static PetscErrorCode LastErrorFirstLine(PetscErrorCode code, char *buf, size_t len)
{
  const char *text = nullptr;
#if PETSC_VERSION_LT(3, 19, 0)
  char *specific = nullptr;
#else
  const char *specific = nullptr;
#endif
  char *nl;

  PetscFunctionBeginUser;
  PetscCall(PetscErrorMessage(code, &text, &specific));
  PetscCall(PetscStrncpy(buf, specific && specific[0] ? specific : (text ? text : "unknown error"), len));
  if ((nl = strchr(buf, '\n'))) *nl = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* max |y - ref| / max |ref| */
static double RelDiff(const PetscScalar *y, const PetscScalar *ref, PetscInt n)
{
  double d = 0, m = 0;
  for (PetscInt k = 0; k < n; k++) {
    d = std::max(d, (double)PetscAbsScalar(y[k] - ref[k]));
    m = std::max(m, (double)PetscAbsScalar(ref[k]));
  }
  return m > 0 ? d / m : d;
}

static PetscErrorCode FillX(Vec x)
{
  PetscScalar *a;
  PetscInt     n;

  PetscFunctionBeginUser;
  PetscCall(VecGetLocalSize(x, &n));
  PetscCall(VecGetArrayWrite(x, &a));
  for (PetscInt k = 0; k < n; k++) a[k] = XValue(k);
  PetscCall(VecRestoreArrayWrite(x, &a));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The stream PETSc's GPU work goes to: its current device context's (the NULL stream by default) */
static PetscErrorCode TimingStream(cudaStream_t *stream)
{
  PetscFunctionBeginUser;
  *stream = nullptr;
#if defined(PETSC_HAVE_CUDA) && PETSC_VERSION_GE(3, 24, 0)
  {
    PetscDeviceContext dctx;
    void              *handle = nullptr;

    PetscCall(PetscDeviceContextGetCurrentContext(&dctx));
    PetscCall(PetscDeviceContextGetStreamHandle(dctx, &handle));
    if (handle) *stream = *static_cast<cudaStream_t *>(handle);
  }
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ----------------------------------------------------------------------------------------------
   Results
   ---------------------------------------------------------------------------------------------- */

enum Status { kOk, kSkipped, kFailed };

struct Result {
  std::string type;
  Status      status = kOk;
  std::string why;                    /* skipped / failed: first line of the error */
  double      us = 0, convert_ms = 0; /* per MatMult; conversion */
  double      format_mb = -1, fill = -1; /* < 0: unknown */
  double      reldiff = -1;              /* against the reference; < 0: not checked */
  bool        is_ref = false, check_ok = true;
  std::string params;
  /* MatMultTranspose (-transpose); < 0: not measured. t_why: why it failed (the MatMult figures stand) */
  double      t_implicit_us = -1, t_explicit_us = -1, t_build_ms = -1, t_reldiff = -1;
  bool        t_check_ok = true;
  std::string t_why;
};

/* An NVTX range around one row's timed calls, named after the row with ':' as '.' (cmrscuda.rcm):
   examples/profile_kernels.sh profiles exactly those launches (ncu --nvtx-include "cmrscuda.rcm/"),
   whatever kernels the type or cuSPARSE launch. Without a profiler attached NVTX calls cost nothing. */
struct TimedRange {
  explicit TimedRange(std::string name)
  {
    std::replace(name.begin(), name.end(), ':', '.');
    nvtxRangePushA(name.c_str());
  }
  ~TimedRange() { nvtxRangePop(); }
  TimedRange(const TimedRange &)            = delete;
  TimedRange &operator=(const TimedRange &) = delete;
};

struct Bench {
  Mat                      A = nullptr;
  PetscInt                 n = 0, nnz = 0, bs = 1;
  PetscInt                 warmup = 10, reps = 100;
  double                   tol = 1e-12, copy_gbs = 0;
  cudaStream_t             stream = nullptr;
  cudaEvent_t              ev[2] = {nullptr, nullptr};
  std::vector<PetscScalar> x, yhost, yref; /* x, host MatMult's y, the reference y */
  std::vector<PetscScalar> ythost;          /* host MatMultTranspose's A^T x: the reference of -transpose */
  bool                     transpose = true;
  std::string              ref_name;
  std::vector<Result>      results;
};

/* Against the reference, or becomes it when there is none yet */
static void Check(Bench &b, Result &r, const PetscScalar *y)
{
  if (b.yref.empty()) {
    b.yref.assign(y, y + b.n);
    b.ref_name = r.type;
    r.is_ref   = true;
    r.reldiff  = RelDiff(y, b.yhost.data(), b.n); /* the reference against the host */
  } else r.reldiff = RelDiff(y, b.yref.data(), b.n);
  r.check_ok = r.reldiff <= b.tol;
}

/* A^T x against the host's; the worse of a type's two paths is kept */
static void CheckTranspose(const Bench &b, Result &r, const PetscScalar *y)
{
  const double d = RelDiff(y, b.ythost.data(), b.n);
  r.t_reldiff    = std::max(r.t_reldiff, d);
  r.t_check_ok   = r.t_check_ok && d <= b.tol;
}

/* ----------------------------------------------------------------------------------------------
   The copy kernel: the attainable bandwidth of this GPU, the yardstick of eta+
   ---------------------------------------------------------------------------------------------- */

__global__ void CopyKernel(const double2 *__restrict__ x, double2 *__restrict__ y, size_t n)
{
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) y[i] = x[i];
}

static PetscErrorCode CopyBandwidth(Bench &b, PetscInt mib, int device)
{
  const size_t   bytes = (size_t)mib << 20, n2 = bytes / sizeof(double2);
  double2       *x = nullptr, *y = nullptr;
  cudaDeviceProp prop;
  float          ms;
  const int      reps = 20, threads = 256;

  PetscFunctionBeginUser;
  BenchCallCUDA(cudaGetDeviceProperties(&prop, device));
  const int blocks = prop.multiProcessorCount * (prop.maxThreadsPerMultiProcessor / threads);
  BenchCallCUDA(cudaMalloc((void **)&x, bytes));
  BenchCallCUDA(cudaMalloc((void **)&y, bytes));
  BenchCallCUDA(cudaMemset(x, 0, bytes));
  BenchCallCUDA(cudaMemset(y, 0, bytes));
  for (int k = 0; k < 3; k++) CopyKernel<<<blocks, threads, 0, b.stream>>>(x, y, n2);
  BenchCallCUDA(cudaGetLastError());
  BenchCallCUDA(cudaEventRecord(b.ev[0], b.stream));
  for (int k = 0; k < reps; k++) CopyKernel<<<blocks, threads, 0, b.stream>>>(x, y, n2);
  BenchCallCUDA(cudaEventRecord(b.ev[1], b.stream));
  BenchCallCUDA(cudaEventSynchronize(b.ev[1]));
  BenchCallCUDA(cudaGetLastError());
  BenchCallCUDA(cudaEventElapsedTime(&ms, b.ev[0], b.ev[1]));
  b.copy_gbs = 2.0 * (double)(n2 * sizeof(double2)) * reps / (1e-3 * ms) / 1e9;
  BenchCallCUDA(cudaFree(x));
  BenchCallCUDA(cudaFree(y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ----------------------------------------------------------------------------------------------
   One Mat type
   ---------------------------------------------------------------------------------------------- */

/* The -mat_view ::ascii_info text of B. An ASCII viewer on a temporary FILE: our types print their
   lines only to ASCII viewers (a string viewer is not one). */
static PetscErrorCode InfoText(Mat B, std::string *text)
{
  FILE       *fp = tmpfile();
  PetscViewer v;
  char        buf[1024];

  PetscFunctionBeginUser;
  text->clear();
  PetscCheck(fp, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "tmpfile() failed: %s", strerror(errno));
  PetscCall(PetscViewerASCIIOpenWithFILE(PETSC_COMM_SELF, fp, &v));
  PetscCall(PetscViewerPushFormat(v, PETSC_VIEWER_ASCII_INFO));
  PetscCall(MatView(B, v));
  PetscCall(PetscViewerPopFormat(v));
  PetscCall(PetscViewerFlush(v));
  PetscCall(PetscViewerDestroy(&v)); /* leaves fp open */
  fflush(fp);
  rewind(fp);
  while (fgets(buf, sizeof(buf), fp)) *text += buf;
  fclose(fp);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Parameters, fill ratio and footprint of B. Our types print
     "CMRS (CUDA) format: strip height 8, entries sorted by column, basic layout (no padding)"
     "  N x N, nnz nonzeros, S stored entries (fill ratio F), X MB (CSR: Y MB)"
   PETSc's SELL prints nothing of the kind, but answers MatSeqSELLGetFillRatio & co (queried, not
   called by name, so that PETSc versions without them still link). */
static PetscErrorCode Describe(Bench &b, Mat B, Result &r)
{
  std::string text;
  PetscBool   aijcusparse;

  PetscFunctionBeginUser;
  PetscCall(InfoText(B, &text));
  for (size_t pos = 0; pos < text.size();) {
    size_t            end  = text.find('\n', pos);
    const std::string line = text.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
    pos                    = end == std::string::npos ? text.size() : end + 1;
    size_t f;
    if ((f = line.find(") format: ")) != std::string::npos) {
      size_t t = line.find_first_not_of(" \t");
      r.params = line.substr(t, line.find(" (", t) - t) + ": " + line.substr(f + 10);
    } else if ((f = line.find("(fill ratio ")) != std::string::npos && r.fill < 0) {
      double fill, mb;
      if (sscanf(line.c_str() + f, "(fill ratio %lf), %lf MB", &fill, &mb) == 2) r.fill = fill, r.format_mb = mb;
    }
  }
  PetscCall(PetscObjectTypeCompareAny((PetscObject)B, &aijcusparse, MATSEQAIJCUSPARSE, MATAIJCUSPARSE, ""));
  if (aijcusparse) { /* values, 32-bit columns and row offsets on the GPU */
    r.fill      = 1.0;
    r.format_mb = (12.0 * (double)b.nnz + 4.0 * (double)(b.n + 1)) / 1e6;
    r.params    = "cuSPARSE CSR (PETSc)";
  }
  {
    PetscErrorCode (*fill_ratio)(Mat, PetscReal *) = nullptr, (*avg_width)(Mat, PetscReal *) = nullptr;
    PetscErrorCode (*max_width)(Mat, PetscInt *)   = nullptr;

    PetscCall(PetscObjectQueryFunction((PetscObject)B, "MatSeqSELLGetFillRatio_C", &fill_ratio));
    PetscCall(PetscObjectQueryFunction((PetscObject)B, "MatSeqSELLGetAvgSliceWidth_C", &avg_width));
    PetscCall(PetscObjectQueryFunction((PetscObject)B, "MatSeqSELLGetMaxSliceWidth_C", &max_width));
    if (fill_ratio) {
      PetscReal padding; /* PETSc's "fill ratio": the fraction of padding among the stored entries */
      PetscCall(fill_ratio(B, &padding));
      if (padding < 1) r.fill = 1.0 / (1.0 - (double)padding);
      r.params = "PETSc SELL: padding " + std::to_string((int)std::lround(100.0 * (double)padding)) + "%";
      if (avg_width && max_width) {
        PetscReal avg;
        PetscInt  mx;
        char      buf[128];
        PetscCall(avg_width(B, &avg));
        PetscCall(max_width(B, &mx));
        PetscCall(PetscSNPrintf(buf, sizeof(buf), ", slice width avg %.1f, max %" PetscInt_FMT, (double)avg, mx));
        r.params += buf;
      }
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatConvert + MatSetFromOptions: what may fail for a type that cannot be used here */
static PetscErrorCode ConvertPhase(Mat A, const char *spec, Mat *B, double *seconds)
{
  PetscLogDouble t0, t1;
  char           type[256], prefix[256] = "";
  char          *colon;

  PetscFunctionBeginUser;
  /* type:tag -> Mat type "type", options prefix "tag_" (set on A, which MatConvert's copy inherits, and on B) */
  PetscCall(PetscStrncpy(type, spec, sizeof(type)));
  if ((colon = strchr(type, ':'))) {
    *colon = 0;
    PetscCall(PetscSNPrintf(prefix, sizeof(prefix), "%s_", colon + 1));
  }
  BenchCallCUDA(cudaDeviceSynchronize());
  PetscCall(PetscTime(&t0));
  if (!strcmp(type, "sellcuda") || !strcmp(type, "seqsellcuda")) {
    /* PETSc has no SeqAIJ -> SeqSELLCUDA converter: MatConvert would fall back to MatConvert_Basic,
       MatSetValues row by row (26 s for 0.76M nonzeros on an H200 host, far longer for the default
       matrices). Through SELL both steps have converters. */
    PetscCall(MatConvert(A, MATSEQSELL, MAT_INITIAL_MATRIX, B));
    PetscCall(MatConvert(*B, type, MAT_INPLACE_MATRIX, B));
  } else {
    if (prefix[0]) PetscCall(MatSetOptionsPrefix(A, prefix));
    PetscErrorCode err = MatConvert(A, type, MAT_INITIAL_MATRIX, B);
    if (prefix[0]) PetscCall(MatSetOptionsPrefix(A, nullptr));
    PetscCall(err);
  }
  if (prefix[0]) PetscCall(MatSetOptionsPrefix(*B, prefix));
  PetscCall(MatSetFromOptions(*B)); /* the type's own options: -mat_cmrs_height, -mat_sellp_slice_height, ... */
  PetscCall(PetscTime(&t1));
  *seconds = t1 - t0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* First MatMult (the end of the conversion), timing, check, description */
static PetscErrorCode MeasurePhase(Bench &b, Mat B, Vec *x, Vec *y, Result &r, double convert_s)
{
  PetscLogDouble     t0, t1;
  const PetscScalar *xa, *ya;
  PetscMemType       mtype;
  float              ms;

  PetscFunctionBeginUser;
  PetscCall(MatCreateVecs(B, x, y));
  PetscCall(FillX(*x));
  /* x goes to the GPU now (CUDA vectors), not inside the timed first MatMult */
  PetscCall(VecGetArrayReadAndMemType(*x, &xa, &mtype));
  PetscCall(VecRestoreArrayReadAndMemType(*x, &xa));
  BenchCallCUDA(cudaDeviceSynchronize());
  PetscCall(PetscTime(&t0));
  PetscCall(MatMult(B, *x, *y));
  BenchCallCUDA(cudaDeviceSynchronize());
  PetscCall(PetscTime(&t1));
  r.convert_ms = 1e3 * (convert_s + (t1 - t0));

  for (PetscInt k = 0; k < b.warmup; k++) PetscCall(MatMult(B, *x, *y));
  {
    TimedRange range(r.type);
    BenchCallCUDA(cudaEventRecord(b.ev[0], b.stream));
    for (PetscInt k = 0; k < b.reps; k++) PetscCall(MatMult(B, *x, *y));
    BenchCallCUDA(cudaEventRecord(b.ev[1], b.stream));
  }
  BenchCallCUDA(cudaEventSynchronize(b.ev[1]));
  BenchCallCUDA(cudaEventElapsedTime(&ms, b.ev[0], b.ev[1]));
  r.us = 1e3 * (double)ms / (double)b.reps;

  PetscCall(VecGetArrayRead(*y, &ya));
  Check(b, r, ya);
  PetscCall(VecRestoreArrayRead(*y, &ya));
  PetscCall(Describe(b, B, r));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Sets -[prefix]mat_gpumats_transpose of B as a user would: the options database, MatSetFromOptions */
static PetscErrorCode SetTransposeMode(Mat B, const char *mode)
{
  const char *prefix = nullptr;
  char        name[256];

  PetscFunctionBeginUser;
  PetscCall(MatGetOptionsPrefix(B, &prefix));
  PetscCall(PetscSNPrintf(name, sizeof(name), "-%smat_gpumats_transpose", prefix ? prefix : ""));
  PetscCall(PetscOptionsSetValue(nullptr, name, mode));
  PetscCall(MatSetFromOptions(B));
  PetscCall(PetscOptionsClearValue(nullptr, name));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatMultTranspose(B, x, y) timed like MatMult: a first call on its own (on the explicit path it
   builds the transposed copy: first_ms), warm-up, timed calls (us per call); y checked */
static PetscErrorCode TimeMultTranspose(Bench &b, Mat B, Vec x, Vec y, Result &r, double *us, double *first_ms)
{
  PetscLogDouble     t0, t1;
  const PetscScalar *ya;
  float              ms;

  PetscFunctionBeginUser;
  BenchCallCUDA(cudaDeviceSynchronize());
  PetscCall(PetscTime(&t0));
  PetscCall(MatMultTranspose(B, x, y));
  BenchCallCUDA(cudaDeviceSynchronize());
  PetscCall(PetscTime(&t1));
  *first_ms = 1e3 * (t1 - t0);
  for (PetscInt k = 0; k < b.warmup; k++) PetscCall(MatMultTranspose(B, x, y));
  BenchCallCUDA(cudaEventRecord(b.ev[0], b.stream));
  for (PetscInt k = 0; k < b.reps; k++) PetscCall(MatMultTranspose(B, x, y));
  BenchCallCUDA(cudaEventRecord(b.ev[1], b.stream));
  BenchCallCUDA(cudaEventSynchronize(b.ev[1]));
  BenchCallCUDA(cudaEventElapsedTime(&ms, b.ev[0], b.ev[1]));
  *us = 1e3 * (double)ms / (double)b.reps;
  PetscCall(VecGetArrayRead(y, &ya));
  CheckTranspose(b, r, ya);
  PetscCall(VecRestoreArrayRead(y, &ya));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* -transpose: both paths of MatMultTranspose of B (A is square: x and y serve A^T too). Ours: the
   implicit product, then the explicit copy (built by the first call); aijcusparse: PETSc's paths
   without and with MAT_FORM_EXPLICIT_TRANSPOSE. Other types are not timed. */
static PetscErrorCode MeasureTransposePhase(Bench &b, Mat B, Vec x, Vec y, Result &r)
{
  char      type[256], *colon;
  PetscBool ours = PETSC_FALSE, aijcusparse;
  PetscInt  n;
  double    first_ms;

  PetscFunctionBeginUser;
  PetscCall(PetscStrncpy(type, r.type.c_str(), sizeof(type)));
  if ((colon = strchr(type, ':'))) *colon = 0; /* type:tag */
  {
    const char *const *roots;
    PetscCall(PetscGpuMatsGetTypes(&n, &roots, nullptr, nullptr));
    for (PetscInt k = 0; k < n && !ours; k++) PetscCall(PetscStrcmp(type, roots[k], &ours));
  }
  PetscCall(PetscObjectTypeCompareAny((PetscObject)B, &aijcusparse, MATSEQAIJCUSPARSE, MATAIJCUSPARSE, ""));
  if (ours) {
    PetscCall(SetTransposeMode(B, "implicit"));
    PetscCall(TimeMultTranspose(b, B, x, y, r, &r.t_implicit_us, &first_ms));
    PetscCall(SetTransposeMode(B, "explicit"));
    PetscCall(TimeMultTranspose(b, B, x, y, r, &r.t_explicit_us, &first_ms));
    r.t_build_ms = std::max(0.0, first_ms - 1e-3 * r.t_explicit_us);
  } else if (aijcusparse) {
    PetscCall(MatSetOption(B, MAT_FORM_EXPLICIT_TRANSPOSE, PETSC_FALSE));
    PetscCall(TimeMultTranspose(b, B, x, y, r, &r.t_implicit_us, &first_ms));
    PetscCall(MatSetOption(B, MAT_FORM_EXPLICIT_TRANSPOSE, PETSC_TRUE));
    PetscCall(TimeMultTranspose(b, B, x, y, r, &r.t_explicit_us, &first_ms));
    r.t_build_ms = std::max(0.0, first_ms - 1e-3 * r.t_explicit_us);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode RunType(Bench &b, const char *type, Result &r)
{
  Mat            B = nullptr;
  Vec            x = nullptr, y = nullptr;
  double         convert_s = 0;
  PetscErrorCode code;
  char           msg[MSG_LEN];

  PetscFunctionBeginUser;
  r.type = type;
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, nullptr));
  code = ConvertPhase(b.A, type, &B, &convert_s);
  PetscCall(PetscPopErrorHandler());
  if (code) {
    PetscCall(LastErrorFirstLine(code, msg, sizeof(msg)));
    r.status = kSkipped, r.why = msg;
  } else {
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, nullptr));
    code = MeasurePhase(b, B, &x, &y, r, convert_s);
    PetscCall(PetscPopErrorHandler());
    if (code) {
      PetscCall(LastErrorFirstLine(code, msg, sizeof(msg)));
      r.status = kFailed, r.why = msg;
    } else if (b.transpose) {
      PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, nullptr));
      code = MeasureTransposePhase(b, B, x, y, r);
      PetscCall(PetscPopErrorHandler());
      if (code) {
        PetscCall(LastErrorFirstLine(code, msg, sizeof(msg)));
        r.t_check_ok = false, r.t_why = msg;
      }
    }
  }
  /* free this type's GPU memory before the next one */
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(MatDestroy(&B));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ----------------------------------------------------------------------------------------------
   Raw cuSPARSE
   ---------------------------------------------------------------------------------------------- */

struct DeviceCSR {
  int     n = 0, nnz = 0;
  int    *rowptr = nullptr, *col = nullptr;
  double *val = nullptr, *x = nullptr, *y = nullptr;
  double  upload_s = 0;
};

static PetscErrorCode FreeDeviceCSR(DeviceCSR &d)
{
  PetscFunctionBeginUser;
  BenchCallCUDA(cudaFree(d.rowptr));
  BenchCallCUDA(cudaFree(d.col));
  BenchCallCUDA(cudaFree(d.val));
  BenchCallCUDA(cudaFree(d.x));
  BenchCallCUDA(cudaFree(d.y));
  d = DeviceCSR();
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* cudaMemcpy of count elements of a PetscInt array as 32-bit ints (a copy only for 64-bit PetscInt) */
static PetscErrorCode UploadIndices(int *dst, const PetscInt *src, size_t count)
{
  PetscFunctionBeginUser;
  if (sizeof(PetscInt) == sizeof(int)) {
    BenchCallCUDA(cudaMemcpy(dst, src, count * sizeof(int), cudaMemcpyHostToDevice));
  } else {
    std::vector<int> tmp(src, src + count);
    BenchCallCUDA(cudaMemcpy(dst, tmp.data(), count * sizeof(int), cudaMemcpyHostToDevice));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode UploadCSR(Bench &b, DeviceCSR &d)
{
  const PetscInt    *ia, *ja;
  const PetscScalar *aa;
  PetscInt           m;
  PetscBool          done;
  PetscLogDouble     t0, t1;

  PetscFunctionBeginUser;
  d.n = (int)b.n, d.nnz = (int)b.nnz;
  PetscCall(PetscTime(&t0));
  PetscCall(MatGetRowIJ(b.A, 0, PETSC_FALSE, PETSC_FALSE, &m, &ia, &ja, &done));
  PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_PLIB, "MatGetRowIJ did not return the CSR of A");
  PetscCall(MatSeqAIJGetArrayRead(b.A, &aa));
  BenchCallCUDA(cudaMalloc((void **)&d.rowptr, (d.n + 1) * sizeof(int)));
  BenchCallCUDA(cudaMalloc((void **)&d.col, (size_t)d.nnz * sizeof(int)));
  BenchCallCUDA(cudaMalloc((void **)&d.val, (size_t)d.nnz * sizeof(double)));
  BenchCallCUDA(cudaMalloc((void **)&d.x, (size_t)d.n * sizeof(double)));
  BenchCallCUDA(cudaMalloc((void **)&d.y, (size_t)d.n * sizeof(double)));
  PetscCall(UploadIndices(d.rowptr, ia, (size_t)d.n + 1));
  PetscCall(UploadIndices(d.col, ja, (size_t)d.nnz));
  BenchCallCUDA(cudaMemcpy(d.val, aa, (size_t)d.nnz * sizeof(double), cudaMemcpyHostToDevice));
  BenchCallCUDA(cudaMemcpy(d.x, b.x.data(), (size_t)d.n * sizeof(double), cudaMemcpyHostToDevice));
  PetscCall(MatSeqAIJRestoreArrayRead(b.A, &aa));
  PetscCall(MatRestoreRowIJ(b.A, 0, PETSC_FALSE, PETSC_FALSE, &m, &ia, &ja, &done));
  PetscCall(PetscTime(&t1));
  d.upload_s = t1 - t0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Times launch() like a MatMult: first call (ends the setup), warm-up, timed calls; y checked */
template <class Launch>
static PetscErrorCode TimeLaunches(Bench &b, const double *dy, Launch &&launch, PetscLogDouble setup_start, Result &r)
{
  PetscLogDouble t1;
  float          ms;

  PetscFunctionBeginUser;
  PetscCall(launch());
  BenchCallCUDA(cudaDeviceSynchronize());
  PetscCall(PetscTime(&t1));
  r.convert_ms += 1e3 * (t1 - setup_start);
  for (PetscInt k = 0; k < b.warmup; k++) PetscCall(launch());
  {
    TimedRange range(r.type);
    BenchCallCUDA(cudaEventRecord(b.ev[0], b.stream));
    for (PetscInt k = 0; k < b.reps; k++) PetscCall(launch());
    BenchCallCUDA(cudaEventRecord(b.ev[1], b.stream));
  }
  BenchCallCUDA(cudaEventSynchronize(b.ev[1]));
  BenchCallCUDA(cudaEventElapsedTime(&ms, b.ev[0], b.ev[1]));
  r.us = 1e3 * (double)ms / (double)b.reps;
  {
    std::vector<double> y((size_t)b.n);
    BenchCallCUDA(cudaMemcpy(y.data(), dy, (size_t)b.n * sizeof(double), cudaMemcpyDeviceToHost));
    Check(b, r, y.data());
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* y = A^T x by cusparseSpMV with CUSPARSE_OPERATION_TRANSPOSE on the same CSR and vectors (A is
   square), timed like the products; into r's transpose columns (implicit: no transposed copy) */
static PetscErrorCode SpMVCSRTranspose(Bench &b, cusparseHandle_t handle, DeviceCSR &d, cusparseSpMatDescr_t mat, cusparseDnVecDescr_t vx, cusparseDnVecDescr_t vy,
                                       cusparseSpMVAlg_t alg, Result &r)
{
  void        *buffer = nullptr;
  size_t       size   = 0;
  const double one = 1.0, zero = 0.0;
  float        ms;

  PetscFunctionBeginUser;
  BenchCallCUSPARSE(cusparseSpMV_bufferSize(handle, CUSPARSE_OPERATION_TRANSPOSE, &one, mat, vx, &zero, vy, CUDA_R_64F, alg, &size));
  if (size) BenchCallCUDA(cudaMalloc(&buffer, size));
  auto launch = [&]() -> PetscErrorCode {
    PetscFunctionBeginUser;
    BenchCallCUSPARSE(cusparseSpMV(handle, CUSPARSE_OPERATION_TRANSPOSE, &one, mat, vx, &zero, vy, CUDA_R_64F, alg, buffer));
    PetscFunctionReturn(PETSC_SUCCESS);
  };
  PetscCall(launch());
  for (PetscInt k = 0; k < b.warmup; k++) PetscCall(launch());
  BenchCallCUDA(cudaEventRecord(b.ev[0], b.stream));
  for (PetscInt k = 0; k < b.reps; k++) PetscCall(launch());
  BenchCallCUDA(cudaEventRecord(b.ev[1], b.stream));
  BenchCallCUDA(cudaEventSynchronize(b.ev[1]));
  BenchCallCUDA(cudaEventElapsedTime(&ms, b.ev[0], b.ev[1]));
  r.t_implicit_us = 1e3 * (double)ms / (double)b.reps;
  {
    std::vector<double> y((size_t)b.n);
    BenchCallCUDA(cudaMemcpy(y.data(), d.y, (size_t)b.n * sizeof(double), cudaMemcpyDeviceToHost));
    CheckTranspose(b, r, y.data());
  }
  BenchCallCUDA(cudaFree(buffer));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* cusparseSpMV with one CSR algorithm; the descriptors and the buffer are made once, as PETSc does */
static PetscErrorCode SpMVCSR(Bench &b, cusparseHandle_t handle, DeviceCSR &d, cusparseSpMVAlg_t alg, Result &r)
{
  cusparseSpMatDescr_t mat = nullptr;
  cusparseDnVecDescr_t vx = nullptr, vy = nullptr;
  void                *buffer = nullptr;
  size_t               size   = 0;
  const double         one = 1.0, zero = 0.0;
  PetscLogDouble       t0;

  PetscFunctionBeginUser;
  r.convert_ms = 1e3 * d.upload_s;
  PetscCall(PetscTime(&t0));
  BenchCallCUSPARSE(cusparseCreateCsr(&mat, d.n, d.n, d.nnz, d.rowptr, d.col, d.val, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
  BenchCallCUSPARSE(cusparseCreateDnVec(&vx, d.n, d.x, CUDA_R_64F));
  BenchCallCUSPARSE(cusparseCreateDnVec(&vy, d.n, d.y, CUDA_R_64F));
  BenchCallCUSPARSE(cusparseSpMV_bufferSize(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mat, vx, &zero, vy, CUDA_R_64F, alg, &size));
  if (size) BenchCallCUDA(cudaMalloc(&buffer, size));
#if CUDART_VERSION >= 12040 /* cusparseSpMV_preprocess came with CUDA 12.4; aijcusparse calls it too */
  BenchCallCUSPARSE(cusparseSpMV_preprocess(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mat, vx, &zero, vy, CUDA_R_64F, alg, buffer));
#endif
  auto launch = [&]() -> PetscErrorCode {
    PetscFunctionBeginUser;
    BenchCallCUSPARSE(cusparseSpMV(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mat, vx, &zero, vy, CUDA_R_64F, alg, buffer));
    PetscFunctionReturn(PETSC_SUCCESS);
  };
  PetscCall(TimeLaunches(b, d.y, launch, t0, r));
  if (b.transpose && alg == CUSPARSE_SPMV_CSR_ALG1) { /* what aijcusparse runs without MAT_FORM_EXPLICIT_TRANSPOSE */
    PetscErrorCode code;
    char           msg[MSG_LEN];
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, nullptr));
    code = SpMVCSRTranspose(b, handle, d, mat, vx, vy, alg, r);
    PetscCall(PetscPopErrorHandler());
    if (code) {
      PetscCall(LastErrorFirstLine(code, msg, sizeof(msg)));
      r.t_check_ok = false, r.t_why = msg;
    }
  }
  r.fill      = 1.0;
  r.format_mb = (12.0 * (double)d.nnz + 4.0 * (double)(d.n + 1)) / 1e6;
  r.params    = std::string("cusparseSpMV ") + (alg == CUSPARSE_SPMV_CSR_ALG1 ? "CUSPARSE_SPMV_CSR_ALG1" : "CUSPARSE_SPMV_CSR_ALG2") + ", 32-bit indices";
  BenchCallCUDA(cudaFree(buffer));
  BenchCallCUSPARSE(cusparseDestroyDnVec(vx));
  BenchCallCUSPARSE(cusparseDestroyDnVec(vy));
  BenchCallCUSPARSE(cusparseDestroySpMat(mat));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* BSR with block size bs from A's CSR, on the host: block row I holds the union of the block
   columns of its bs rows, ascending; entries missing from a block are explicit zeros; blocks are
   row-major. */
struct HostBSR {
  PetscInt            bs = 1, mb = 0;
  std::vector<int>    rowptr, col;
  std::vector<double> val;
};

static PetscErrorCode BuildBSR(Mat A, PetscInt bs, HostBSR &h)
{
  const PetscInt    *ia, *ja;
  const PetscScalar *aa;
  PetscInt           n;
  PetscBool          done;

  PetscFunctionBeginUser;
  PetscCall(MatGetRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_PLIB, "MatGetRowIJ did not return the CSR of A");
  PetscCheck(n % bs == 0, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "%" PetscInt_FMT " rows are not a multiple of the block size %" PetscInt_FMT, n, bs);
  PetscCall(MatSeqAIJGetArrayRead(A, &aa));
  h.bs = bs, h.mb = n / bs;
  h.rowptr.assign((size_t)h.mb + 1, 0);
  h.col.clear();
  std::vector<int> mark((size_t)h.mb, -1); /* block column -> last block row that met it, then its slot */
  for (PetscInt I = 0; I < h.mb; I++) {
    for (PetscInt r = I * bs; r < (I + 1) * bs; r++)
      for (PetscInt k = ia[r]; k < ia[r + 1]; k++) {
        const PetscInt J = ja[k] / bs;
        if (mark[(size_t)J] != (int)I) mark[(size_t)J] = (int)I, h.col.push_back((int)J);
      }
    std::sort(h.col.begin() + h.rowptr[(size_t)I], h.col.end());
    h.rowptr[(size_t)I + 1] = (int)h.col.size();
  }
  PetscCall(CheckIndexRange((double)n, (double)h.col.size() * (double)(bs * bs), "BSR copy"));
  std::fill(mark.begin(), mark.end(), -1);
  h.val.assign(h.col.size() * (size_t)(bs * bs), 0.0);
  for (PetscInt I = 0; I < h.mb; I++) {
    for (int q = h.rowptr[(size_t)I]; q < h.rowptr[(size_t)I + 1]; q++) mark[(size_t)h.col[(size_t)q]] = q;
    for (PetscInt r = I * bs; r < (I + 1) * bs; r++)
      for (PetscInt k = ia[r]; k < ia[r + 1]; k++) h.val[(size_t)mark[(size_t)(ja[k] / bs)] * (size_t)(bs * bs) + (size_t)((r % bs) * bs + ja[k] % bs)] = (double)aa[k];
  }
  PetscCall(MatSeqAIJRestoreArrayRead(A, &aa));
  PetscCall(MatRestoreRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* cusparseDbsrmv on the BSR copy of A (built on the host, counted in the setup time) */
static PetscErrorCode SpMVBSR(Bench &b, cusparseHandle_t handle, DeviceCSR &d, Result &r)
{
  HostBSR            h;
  PetscLogDouble     t0;
  int               *drow = nullptr, *dcol = nullptr;
  double            *dval = nullptr;
  cusparseMatDescr_t descr = nullptr;
  const double       one = 1.0, zero = 0.0;

  PetscFunctionBeginUser;
  PetscCall(PetscTime(&t0));
  PetscCall(BuildBSR(b.A, b.bs, h));
  const int nnzb = (int)h.col.size();
  BenchCallCUDA(cudaMalloc((void **)&drow, h.rowptr.size() * sizeof(int)));
  BenchCallCUDA(cudaMalloc((void **)&dcol, h.col.size() * sizeof(int)));
  BenchCallCUDA(cudaMalloc((void **)&dval, h.val.size() * sizeof(double)));
  BenchCallCUDA(cudaMemcpy(drow, h.rowptr.data(), h.rowptr.size() * sizeof(int), cudaMemcpyHostToDevice));
  BenchCallCUDA(cudaMemcpy(dcol, h.col.data(), h.col.size() * sizeof(int), cudaMemcpyHostToDevice));
  BenchCallCUDA(cudaMemcpy(dval, h.val.data(), h.val.size() * sizeof(double), cudaMemcpyHostToDevice));
  BenchCallCUSPARSE(cusparseCreateMatDescr(&descr));
  BenchCallCUSPARSE(cusparseSetMatType(descr, CUSPARSE_MATRIX_TYPE_GENERAL));
  BenchCallCUSPARSE(cusparseSetMatIndexBase(descr, CUSPARSE_INDEX_BASE_ZERO));
  auto launch = [&]() -> PetscErrorCode {
    PetscFunctionBeginUser;
    BenchCallCUSPARSE(cusparseDbsrmv(handle, CUSPARSE_DIRECTION_ROW, CUSPARSE_OPERATION_NON_TRANSPOSE, (int)h.mb, (int)h.mb, nnzb, &one, descr, dval, drow, dcol, (int)h.bs, d.x, &zero, d.y));
    PetscFunctionReturn(PETSC_SUCCESS);
  };
  PetscCall(TimeLaunches(b, d.y, launch, t0, r));
  r.fill      = (double)h.val.size() / (double)b.nnz;
  r.format_mb = (8.0 * (double)h.val.size() + 4.0 * (double)nnzb + 4.0 * (double)(h.mb + 1)) / 1e6;
  r.params    = "cusparseDbsrmv, " + std::to_string((long long)h.bs) + "x" + std::to_string((long long)h.bs) + " row-major blocks, " + std::to_string(nnzb) + " blocks";
  BenchCallCUSPARSE(cusparseDestroyMatDescr(descr));
  BenchCallCUDA(cudaFree(drow));
  BenchCallCUDA(cudaFree(dcol));
  BenchCallCUDA(cudaFree(dval));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Runs one baseline under PetscReturnErrorHandler: a failure is reported, the run goes on */
template <class Fn>
static PetscErrorCode RunBaseline(Bench &b, const char *name, Fn &&fn)
{
  Result         r;
  PetscErrorCode code;
  char           msg[MSG_LEN];

  PetscFunctionBeginUser;
  r.type = name;
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, nullptr));
  code = fn(r);
  PetscCall(PetscPopErrorHandler());
  if (code) {
    PetscCall(LastErrorFirstLine(code, msg, sizeof(msg)));
    r.status = kFailed, r.why = msg;
  }
  b.results.push_back(r);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode RunBaselines(Bench &b)
{
  cusparseHandle_t handle = nullptr;
  DeviceCSR        d;
  PetscErrorCode   code;
  char             msg[MSG_LEN];

  PetscFunctionBeginUser;
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, nullptr));
  code = [&]() -> PetscErrorCode {
    PetscFunctionBeginUser;
    BenchCallCUSPARSE(cusparseCreate(&handle));
    BenchCallCUSPARSE(cusparseSetStream(handle, b.stream));
    PetscCall(UploadCSR(b, d));
    PetscFunctionReturn(PETSC_SUCCESS);
  }();
  PetscCall(PetscPopErrorHandler());
  if (code) { /* no baseline can run: say so in each of their rows */
    PetscCall(LastErrorFirstLine(code, msg, sizeof(msg)));
    for (const char *name : {"cusparse-csr-alg1", "cusparse-csr-alg2", "cusparse-bsr"}) {
      if (!strcmp(name, "cusparse-bsr") && b.bs == 1) continue;
      Result r;
      r.type = name, r.status = kFailed, r.why = msg;
      b.results.push_back(r);
    }
  } else {
    PetscCall(RunBaseline(b, "cusparse-csr-alg1", [&](Result &r) { return SpMVCSR(b, handle, d, CUSPARSE_SPMV_CSR_ALG1, r); }));
    PetscCall(RunBaseline(b, "cusparse-csr-alg2", [&](Result &r) { return SpMVCSR(b, handle, d, CUSPARSE_SPMV_CSR_ALG2, r); }));
    if (b.bs > 1) PetscCall(RunBaseline(b, "cusparse-bsr", [&](Result &r) { return SpMVBSR(b, handle, d, r); }));
  }
  /* free the baselines' GPU memory before the Mat types run */
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, nullptr));
  code = FreeDeviceCSR(d);
  if (handle) (void)cusparseDestroy(handle);
  (void)code; /* nothing more to do about a failed cudaFree */
  PetscCall(PetscPopErrorHandler());
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ----------------------------------------------------------------------------------------------
   Output
   ---------------------------------------------------------------------------------------------- */

struct RunInfo {
  std::string date, gpu, petsc, cuda, matrix;
};

static double BetaPlus(const Bench &b) { return 12.0 * (double)b.nnz + 4.0 * (double)(b.n + 1) + 16.0 * (double)b.n; }

static double RefTime(const Bench &b)
{
  for (const Result &r : b.results)
    if (r.type == "aijcusparse" && r.status == kOk) return r.us;
  return 0;
}

static bool Passed(const Result &r) { return r.status == kSkipped || (r.status == kOk && r.check_ok && r.t_check_ok); }

/* the transpose columns: "-" where not measured */
static std::string Cell(double v, const char *fmt)
{
  char buf[32] = "-";
  if (v >= 0) snprintf(buf, sizeof(buf), fmt, v);
  return buf;
}
static const char *TransposeCheckWord(const Result &r)
{
  if (!r.t_why.empty()) return "error";
  if (r.t_reldiff < 0) return "";
  return r.t_check_ok ? "ok" : "FAIL";
}

static const char *CheckWord(const Result &r) { return r.status != kOk ? "" : (!r.check_ok ? "FAIL" : (r.is_ref ? "ref" : "ok")); }

static PetscErrorCode PrintRow(const Bench &b, const Result &r)
{
  PetscFunctionBeginUser;
  if (r.status == kSkipped) {
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-18s  skipped: %s\n", r.type.c_str(), r.why.c_str()));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (r.status == kFailed) {
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-18s  FAILED: %s\n", r.type.c_str(), r.why.c_str()));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  const double s = 1e-6 * r.us, ref = RefTime(b);
  char         speed[16] = "-", mb[16] = "-", fill[16] = "-";
  if (ref > 0) snprintf(speed, sizeof(speed), "%.2f", ref / r.us);
  if (r.format_mb >= 0) snprintf(mb, sizeof(mb), "%.1f", r.format_mb);
  if (r.fill >= 0) snprintf(fill, sizeof(fill), "%.3f", r.fill);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-18s %9.1f %7.1f %5.3f %7.1f %7s %9.1f %9s %6s %-4s %8.1e | %8s %8s %8s %-5s | %s\n", r.type.c_str(), r.us, BetaPlus(b) / s / 1e9,
                        BetaPlus(b) / s / 1e9 / b.copy_gbs, 2.0 * (double)b.nnz / s / 1e9, speed, r.convert_ms, mb, fill, CheckWord(r), r.reldiff,
                        Cell(r.t_implicit_us, "%.1f").c_str(), Cell(r.t_explicit_us, "%.1f").c_str(), Cell(r.t_build_ms, "%.2f").c_str(), TransposeCheckWord(r),
                        r.params.c_str()));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* s as one CSV field: in double quotes, with " doubled */
static std::string Csv(const std::string &s)
{
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c == '\n' ? ' ' : c);
  return q + "\"";
}

static PetscErrorCode WriteCSV(const Bench &b, const RunInfo &info, const char *path)
{
  FILE  *fp = fopen(path, "a");
  double ref = RefTime(b), beta = BetaPlus(b);

  PetscFunctionBeginUser;
  PetscCheck(fp, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "Cannot open -csv file %s: %s", path, strerror(errno));
  PetscCheck(!fseek(fp, 0, SEEK_END), PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "Cannot seek in -csv file %s: %s", path, strerror(errno));
  if (ftell(fp) == 0) /* a new (or empty) file: the header first */
    fprintf(fp, "date,gpu,petsc,cuda,matrix,rows,nnz,nnz_per_row,block_size,type,status,time_us,gbs,eta_plus,gflops,speedup,convert_ms,format_mb,fill_ratio,check,rel_diff,params,copy_gbs,warmup,reps,note,"
                "transpose_implicit_us,transpose_explicit_us,transpose_build_ms,transpose_check,transpose_rel_diff\n");
  for (const Result &r : b.results) {
    const char *status = r.status == kSkipped ? "skipped" : (r.status == kFailed ? "error" : (r.check_ok ? "ok" : "FAIL"));
    fprintf(fp, "%s,%s,%s,%s,%s,%" PetscInt_FMT ",%" PetscInt_FMT ",%.4f,%" PetscInt_FMT ",%s,%s,", info.date.c_str(), Csv(info.gpu).c_str(), info.petsc.c_str(), info.cuda.c_str(), Csv(info.matrix).c_str(), b.n, b.nnz,
            (double)b.nnz / (double)b.n, b.bs, Csv(r.type).c_str(), status);
    if (r.status == kOk) {
      const double s = 1e-6 * r.us;
      fprintf(fp, "%.3f,%.2f,%.4f,%.2f,", r.us, beta / s / 1e9, beta / s / 1e9 / b.copy_gbs, 2.0 * (double)b.nnz / s / 1e9);
      if (ref > 0) fprintf(fp, "%.4f", ref / r.us);
      fprintf(fp, ",%.3f,", r.convert_ms);
      if (r.format_mb >= 0) fprintf(fp, "%.4f", r.format_mb);
      fprintf(fp, ",");
      if (r.fill >= 0) fprintf(fp, "%.4f", r.fill);
      fprintf(fp, ",%s,%.3e,%s,", CheckWord(r), r.reldiff, Csv(r.params).c_str());
    } else fprintf(fp, ",,,,,,,,,,,");
    fprintf(fp, "%.1f,%" PetscInt_FMT ",%" PetscInt_FMT ",%s,", b.copy_gbs, b.warmup, b.reps, Csv(r.why.empty() ? r.t_why : r.why).c_str());
    /* the transpose group last, so that files begun before it existed keep their columns */
    auto field = [](double v, const char *fmt) { return v >= 0 ? Cell(v, fmt) : std::string(); };
    fprintf(fp, "%s,%s,%s,%s,%s\n", field(r.t_implicit_us, "%.3f").c_str(), field(r.t_explicit_us, "%.3f").c_str(), field(r.t_build_ms, "%.3f").c_str(),
            TransposeCheckWord(r), field(r.t_reldiff, "%.3e").c_str());
  }
  PetscCheck(!fclose(fp), PETSC_COMM_SELF, PETSC_ERR_FILE_WRITE, "Error writing -csv file %s: %s", path, strerror(errno));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
  static const char *const families[]      = {"poisson7", "poisson27", "block3", "random4", "random16", "powerlaw", "shuffled7"};
  static const PetscInt    default_n[]     = {160, 100, 64, 4000000, 2000000, 2000000, 160};
  static const char *const default_types[] = {"aijcusparse", "sellcuda", "cmrscuda", "sellpcuda", "bellpackcuda", "autocuda"};
  const int                ndefault        = 6;
  Bench                    b;
  HostCSR                  csr;
  RunInfo                  info;
  char                     file[PETSC_MAX_PATH_LEN] = "", csv[PETSC_MAX_PATH_LEN] = "", label[PETSC_MAX_PATH_LEN + 64];
  char                    *types[MAX_TYPES];
  PetscInt                 family = 0, n = -1, ntypes = MAX_TYPES, mib = 1024;
  PetscBool                load = PETSC_FALSE, types_set = PETSC_FALSE, baselines = PETSC_TRUE, transpose = PETSC_TRUE, mat_type, constant_values = PETSC_FALSE;
  PetscReal                tol = 1e-12;
  PetscMPIInt              size;
  int                      ndev = 0, dev = 0;
  cudaError_t              cerr;

  PetscCall(PetscInitialize(&argc, &argv, nullptr, help));
  PetscCall(PetscGpuMatsInitialize());
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCheck(size == 1, PETSC_COMM_WORLD, PETSC_ERR_WRONG_MPI_SIZE, "bench runs on one MPI rank (one GPU), not %d", (int)size);

  PetscOptionsBegin(PETSC_COMM_WORLD, nullptr, "petsc-gpumats MatMult benchmark", nullptr);
  PetscCall(PetscOptionsEList("-matrix", "Generated matrix", "bench.cu", families, 7, families[family], &family, nullptr));
  PetscCall(PetscOptionsInt("-n", "Grid points per direction (poisson7, poisson27, block3, shuffled7) or rows (random4, random16, powerlaw)", "bench.cu", n, &n, nullptr));
  PetscCall(PetscOptionsString("-f", "Read the matrix from this file: *.mtx Matrix Market, else PETSc binary", "bench.cu", file, file, sizeof(file), &load));
  PetscCall(PetscOptionsStringArray("-types", "Comma-separated Mat types", "bench.cu", types, &ntypes, &types_set));
  PetscCall(PetscOptionsBoundedInt("-warmup", "Untimed MatMult calls per type", "bench.cu", b.warmup, &b.warmup, nullptr, 0));
  PetscCall(PetscOptionsBoundedInt("-reps", "Timed MatMult calls per type", "bench.cu", b.reps, &b.reps, nullptr, 1));
  PetscCall(PetscOptionsBool("-baselines", "Also time raw cuSPARSE (CSR ALG1, ALG2; BSR for block size > 1)", "bench.cu", baselines, &baselines, nullptr));
  PetscCall(PetscOptionsBool("-transpose", "Also time MatMultTranspose: implicit, explicit copy and its build; cuSPARSE's transposed SpMV", "bench.cu", transpose,
                             &transpose, nullptr));
  PetscCall(PetscOptionsBoundedInt("-copy_mib", "MiB per buffer of the copy kernel", "bench.cu", mib, &mib, nullptr, 1));
  PetscCall(PetscOptionsReal("-check_tol", "Largest max|y - yref| / max|yref| that passes", "bench.cu", tol, &tol, nullptr));
  PetscCall(PetscOptionsString("-csv", "Append the results to this CSV file", "bench.cu", csv, csv, sizeof(csv), nullptr));
  PetscCall(PetscOptionsBool("-constant_values", "Generated matrices: every off-diagonal entry -1 (a few distinct values, as a constant-coefficient stencil)", "bench.cu",
                             constant_values, &constant_values, nullptr));
  PetscOptionsEnd();
  g_constant_values = constant_values;
  b.tol       = (double)tol;
  b.transpose = transpose;
  PetscCall(PetscOptionsHasName(nullptr, nullptr, "-mat_type", &mat_type));
  PetscCheck(!mat_type, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "bench compares the types of -types; -mat_type would retype the converted matrices, drop it");
  if (!types_set) {
    ntypes = 0;
    for (int t = 0; t < ndefault; t++) PetscCall(PetscStrallocpy(default_types[t], &types[ntypes++]));
  }
  PetscCheck(ntypes > 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-types needs a comma-separated list of Mat types");

  /* a GPU, before anything else is built: without one there is nothing to measure */
  if ((cerr = cudaGetDeviceCount(&ndev)) != cudaSuccess || ndev == 0) {
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "bench: no usable CUDA GPU here (%s); this benchmark needs an NVIDIA GPU with a driver for CUDA %d.%d\n",
                          cerr != cudaSuccess ? cudaGetErrorString(cerr) : "the CUDA runtime reports no devices", CUDART_VERSION / 1000, (CUDART_VERSION % 1000) / 10));
    for (PetscInt t = 0; t < ntypes; t++) PetscCall(PetscFree(types[t]));
    PetscCall(PetscFinalize());
    return 2;
  }
#if defined(PETSC_HAVE_CUDA)
  PetscCall(PetscDeviceInitialize(PETSC_DEVICE_CUDA)); /* PETSc picks its GPU now; we use the same one */
#endif
  BenchCallCUDA(cudaGetDevice(&dev));
  PetscCall(TimingStream(&b.stream));
  BenchCallCUDA(cudaEventCreate(&b.ev[0]));
  BenchCallCUDA(cudaEventCreate(&b.ev[1]));

  /* the matrix */
  if (load) {
    const char *dot = strrchr(file, '.');
    if (dot && !strcmp(dot, ".mtx")) {
      PetscCall(ReadMatrixMarket(file, &csr));
    } else {
      PetscViewer v;
      PetscCall(MatCreate(PETSC_COMM_SELF, &b.A));
      PetscCall(MatSetType(b.A, MATSEQAIJ));
      PetscCall(PetscViewerBinaryOpen(PETSC_COMM_SELF, file, FILE_MODE_READ, &v));
      PetscCall(MatLoad(b.A, v));
      PetscCall(PetscViewerDestroy(&v));
    }
    const char *slash = strrchr(file, '/');
    PetscCall(PetscSNPrintf(label, sizeof(label), "%s", slash ? slash + 1 : file));
  } else {
    if (n < 0) n = default_n[family];
    PetscCheck(n >= 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-n must be positive");
    if (family <= 2 || family == 6) {
      PetscCheck((double)n * n * n * (family == 2 ? 3 : 1) < (double)INT32_MAX, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-n %" PetscInt_FMT " is too large", n);
      if (family == 6) {
        const ShuffledGen g(n);
        PetscCall(BuildCSR(g, n * n * n, families[family], &csr));
      } else {
        const StencilGen g = {n, family == 2 ? 3 : 1, family != 0, family != 2};
        PetscCall(BuildCSR(g, n * n * n * g.dof, families[family], &csr));
      }
    } else {
      const RandomGen g = {n, family == 3 ? 4 : (family == 4 ? 16 : 0)};
      PetscCall(BuildCSR(g, n, families[family], &csr));
    }
    PetscCall(PetscSNPrintf(label, sizeof(label), "%s n=%" PetscInt_FMT "%s", families[family], n, g_constant_values ? " constant" : ""));
  }
  if (!b.A) {
    PetscCall(MatCreateSeqAIJWithArrays(PETSC_COMM_SELF, csr.n, csr.n, csr.i, csr.j, csr.a, &b.A));
    if (!load && family == 2) PetscCall(MatSetBlockSize(b.A, 3));
  }
  {
    PetscInt M, N;
    MatInfo  mi;
    PetscCall(MatGetSize(b.A, &M, &N));
    PetscCheck(M == N, PETSC_COMM_WORLD, PETSC_ERR_ARG_SIZ, "The matrix is %" PetscInt_FMT " x %" PetscInt_FMT "; the benchmark needs a square one", M, N);
    PetscCall(MatGetInfo(b.A, MAT_LOCAL, &mi));
    PetscCall(MatGetBlockSize(b.A, &b.bs));
    b.n = M, b.nnz = (PetscInt)mi.nz_used;
    PetscCall(CheckIndexRange((double)b.n, (double)b.nnz, label));
  }

  /* x, and A x on the host: the check of the reference */
  {
    Vec                xh, yh;
    const PetscScalar *ya;
    PetscCall(MatCreateVecs(b.A, &xh, &yh));
    PetscCall(FillX(xh));
    PetscCall(MatMult(b.A, xh, yh));
    b.x.resize((size_t)b.n);
    for (PetscInt k = 0; k < b.n; k++) b.x[(size_t)k] = XValue(k);
    PetscCall(VecGetArrayRead(yh, &ya));
    b.yhost.assign(ya, ya + b.n);
    PetscCall(VecRestoreArrayRead(yh, &ya));
    if (b.transpose) { /* A^T x with the same x (A is square) */
      PetscCall(MatMultTranspose(b.A, xh, yh));
      PetscCall(VecGetArrayRead(yh, &ya));
      b.ythost.assign(ya, ya + b.n);
      PetscCall(VecRestoreArrayRead(yh, &ya));
    }
    PetscCall(VecDestroy(&xh));
    PetscCall(VecDestroy(&yh));
  }

  /* the header */
  {
    cudaDeviceProp prop;
    PetscInt       major, minor, subminor, release;
    int            rt = 0, drv = 0, sp = 0;
    char           buf[128];
    time_t         now = time(nullptr);
    cusparseHandle_t h;

    BenchCallCUDA(cudaGetDeviceProperties(&prop, dev));
    BenchCallCUDA(cudaRuntimeGetVersion(&rt));
    BenchCallCUDA(cudaDriverGetVersion(&drv));
    if (cusparseCreate(&h) == CUSPARSE_STATUS_SUCCESS) {
      (void)cusparseGetVersion(h, &sp);
      (void)cusparseDestroy(h);
    }
    PetscCall(PetscGetVersionNumber(&major, &minor, &subminor, &release));
    PetscCall(PetscSNPrintf(buf, sizeof(buf), "%" PetscInt_FMT ".%" PetscInt_FMT ".%" PetscInt_FMT "%s", major, minor, subminor, release ? "" : "-dev"));
    info.petsc = buf;
    PetscCall(PetscSNPrintf(buf, sizeof(buf), "%d.%d", rt / 1000, (rt % 1000) / 10));
    info.cuda = buf;
    strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    info.date   = buf;
    info.gpu    = prop.name;
    info.matrix = label;

    PetscCall(CopyBandwidth(b, mib, dev));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "petsc-gpumats MatMult benchmark, %s\n", info.date.c_str()));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "GPU %d: %s (%d SMs, %.1f GiB), CUDA runtime %s, driver %d.%d, cuSPARSE %d; PETSc %s%s\n", dev, prop.name, prop.multiProcessorCount,
                          (double)prop.totalGlobalMem / (1 << 30), info.cuda.c_str(), drv / 1000, (drv % 1000) / 10, sp, info.petsc.c_str(),
#if defined(PETSC_HAVE_CUDA)
                          ""
#else
                          " (without CUDA: aijcusparse/sellcuda unavailable, *cuda types stage vectors through the GPU)"
#endif
                          ));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "matrix %s: %" PetscInt_FMT " rows, %" PetscInt_FMT " nonzeros, %.2f nnz/row, block size %" PetscInt_FMT "\n", label, b.n, b.nnz, (double)b.nnz / (double)b.n, b.bs));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "copy bandwidth B = %.1f GB/s (y = x, double2, 2 x %" PetscInt_FMT " MiB); beta+ = 12 nnz + 4 (n+1) + 16 n = %.1f MB\n", b.copy_gbs, mib, BetaPlus(b) / 1e6));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "MatMult: %" PetscInt_FMT " warm-up + %" PetscInt_FMT " timed calls per type, CUDA events on the %s stream; check: max|y - yref|/max|yref| <= %.0e\n\n", b.warmup, b.reps,
                          b.stream ? "PETSc device context's" : "default (NULL)", b.tol));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-18s %9s %7s %5s %7s %7s %9s %9s %6s %-4s %8s | %8s %8s %8s %-5s | %s\n", "type", "time(us)", "GB/s", "eta+", "GFlop/s", "speedup", "conv(ms)",
                          "format MB", "fill", "chk", "rel.diff", "A^T impl", "expl(us)", "build ms", "chk", "parameters"));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "------------------ --------- ------- ----- ------- ------- --------- --------- ------ ---- -------- | -------- -------- -------- ----- | ----------\n"));
  }

  /* aijcusparse first (its y is the reference), then raw cuSPARSE, then the other types */
  for (PetscInt t = 0; t < ntypes; t++)
    if (!strcmp(types[t], "aijcusparse")) {
      Result r;
      PetscCall(RunType(b, types[t], r));
      b.results.push_back(r);
      PetscCall(PrintRow(b, b.results.back()));
      break;
    }
  if (baselines) {
    const size_t first = b.results.size();
    PetscCall(RunBaselines(b));
    for (size_t k = first; k < b.results.size(); k++) PetscCall(PrintRow(b, b.results[k]));
  }
  if (b.yref.empty()) { /* neither aijcusparse nor cusparse-csr-alg1 ran: host MatMult is the reference */
    b.yref     = b.yhost;
    b.ref_name = "host MatMult";
  }
  for (PetscInt t = 0; t < ntypes; t++) {
    if (!strcmp(types[t], "aijcusparse")) continue;
    Result r;
    PetscCall(RunType(b, types[t], r));
    b.results.push_back(r);
    PetscCall(PrintRow(b, b.results.back()));
  }

  /* summary */
  int nfail = 0;
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "\n"));
  for (const Result &r : b.results)
    if (r.is_ref) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "reference: %s, which agrees with MatMult on the host to %.1e (relative)\n", r.type.c_str(), r.reldiff));
  if (b.ref_name == "host MatMult") PetscCall(PetscPrintf(PETSC_COMM_WORLD, "reference: MatMult of A on the host\n"));
  for (const Result &r : b.results) {
    if (Passed(r)) continue;
    nfail++;
    if (r.status == kFailed) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAILED: %s: %s\n", r.type.c_str(), r.why.c_str()));
    else if (!r.t_why.empty()) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAILED: %s: MatMultTranspose: %s\n", r.type.c_str(), r.t_why.c_str()));
    else if (!r.t_check_ok) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAILED: %s: A^T x differs from the host's by %.2e (relative), more than %.0e\n", r.type.c_str(), r.t_reldiff, b.tol));
    else PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAILED: %s: y differs from the reference (%s) by %.2e (relative), more than %.0e\n", r.type.c_str(), r.is_ref ? "host MatMult" : b.ref_name.c_str(), r.reldiff, b.tol));
  }
  if (!nfail) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "every type that ran passed its check\n"));
  if (csv[0]) {
    PetscCall(WriteCSV(b, info, csv));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "appended %d rows to %s\n", (int)b.results.size(), csv));
  }

  BenchCallCUDA(cudaEventDestroy(b.ev[0]));
  BenchCallCUDA(cudaEventDestroy(b.ev[1]));
  for (PetscInt t = 0; t < ntypes; t++) PetscCall(PetscFree(types[t]));
  PetscCall(MatDestroy(&b.A));
  PetscCall(FreeCSR(&csr)); /* after A, which used the arrays in place */
  PetscCall(PetscFinalize());
  return nfail ? 1 : 0;
}
