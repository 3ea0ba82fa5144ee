/*
   mmread.h - the Matrix Market reader of the examples (solve.c, bench.cu): one process reads and
   checks a whole file into host COO arrays (0-based, symmetric and skew-symmetric storage
   expanded, duplicates kept). A malformed file gives a PETSc error that names the file and, past
   the header, the line. Plain C that also compiles as C++ (bench.cu, through nvcc); header-only,
   so every function is static.

     MMData mm = {file, 0, 0, 0, NULL, NULL, NULL};
     PetscCall(MMRead(&mm));            mm.M x mm.N, entries (mm.i[k], mm.j[k], mm.v[k]), k < mm.n
     PetscCall(MMFree(&mm));
*/
#ifndef GPUMATS_EXAMPLES_MMREAD_H
#define GPUMATS_EXAMPLES_MMREAD_H

#include <petscsys.h>

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* PETSc before 3.19 returned a plain 0 for success; PETSC_INT_MAX replaced PETSC_MAX_INT later */
#if PETSC_VERSION_LT(3, 19, 0) && !defined(PETSC_SUCCESS)
  #define PETSC_SUCCESS 0
#endif
#if !defined(PETSC_INT_MAX)
  #define PETSC_INT_MAX PETSC_MAX_INT
#endif

#define MM_LINE    4096 /* longest Matrix Market line accepted (longer comment lines are skipped) */
#define MM_MSG_LEN 1024

/* A matrix read from file: M x N with the n entries (i[k], j[k], v[k]), 0-based, in file order */
typedef struct {
  const char  *file;
  PetscInt     M, N;
  PetscCount   n; /* stored entries */
  PetscInt    *i, *j;
  PetscScalar *v;
} MMData;

/* Copy of s fit for an error message: at most 60 characters, non-printable ones shown as '?'. */
static const char *MMShown(const char *s)
{
  static char buf[64];
  size_t      k;

  for (k = 0; s[k] && k < 60; k++) buf[k] = isprint((unsigned char)s[k]) ? s[k] : '?';
  buf[k] = 0;
  if (s[k] && k == 60) strcpy(buf + 57, "...");
  return buf;
}

/* Next line of fp into buf without its end of line; *eof at end of file, *toolong if the line did not
   fit in buf (its rest is skipped). */
static PetscErrorCode MMReadLine(FILE *fp, const char *file, PetscInt64 lineno, char *buf, size_t size, PetscBool *eof, PetscBool *toolong)
{
  size_t l;

  PetscFunctionBeginUser;
  *eof = *toolong = PETSC_FALSE;
  errno           = 0;
  if (!fgets(buf, (int)size, fp)) {
    PetscCheck(!ferror(fp), PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "Matrix Market file %s: cannot read line %" PetscInt64_FMT ": %s", file, lineno, strerror(errno));
    *eof = PETSC_TRUE;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  l = strlen(buf);
  if (l && buf[l - 1] == '\n') buf[--l] = 0;
  else if (!feof(fp)) {
    int c;

    *toolong = PETSC_TRUE;
    while ((c = fgetc(fp)) != EOF && c != '\n') { }
  }
  if (l && buf[l - 1] == '\r') buf[--l] = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscBool MMSkippable(const char *s)
{
  while (isspace((unsigned char)*s)) s++;
  return (*s == 0 || *s == '%') ? PETSC_TRUE : PETSC_FALSE;
}

/* Parsers for one whitespace-separated number at *s; advance *s past it, or return false */
static PetscBool MMInt(char **s, PetscInt64 *v)
{
  char     *e;
  long long x;

  errno = 0;
  x     = strtoll(*s, &e, 10);
  if (e == *s || errno == ERANGE || (*e && !isspace((unsigned char)*e))) return PETSC_FALSE;
  *v = (PetscInt64)x, *s = e;
  return PETSC_TRUE;
}

static PetscBool MMReal(char **s, double *v)
{
  char  *e;
  double x;

  errno = 0;
  x     = strtod(*s, &e);
  if (e == *s || errno == ERANGE || (*e && !isspace((unsigned char)*e))) return PETSC_FALSE;
  *v = x, *s = e;
  return PETSC_TRUE;
}

static PetscBool MMAtEnd(const char *s)
{
  while (isspace((unsigned char)*s)) s++;
  return *s ? PETSC_FALSE : PETSC_TRUE;
}

/* The text of a parse error (formatted on failure only, by MMCheck) */
static const char *MMText(const char *fmt, ...) PETSC_ATTRIBUTE_FORMAT(1, 2);
static const char *MMText(const char *fmt, ...)
{
  static char buf[MM_MSG_LEN];
  va_list     ap;

  va_start(ap, fmt);
  vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  return buf;
}

/* Fails with "Matrix Market file <file>, line <ln>: <message>" */
#define MMCheck(cond, ln, ...) \
  PetscCheck(cond, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "Matrix Market file %s, line %" PetscInt64_FMT ": %s", file, (PetscInt64)(ln), MMText(__VA_ARGS__))

/* Reads mm->file (coordinate, real/integer/pattern, general/symmetric/skew-symmetric) into mm;
   the arrays it allocates are freed by MMFree(). */
static PetscErrorCode MMRead(MMData *mm)
{
  const char *file = mm->file;
  FILE       *fp;
  char        line[MM_LINE], w[5][64];
  PetscInt64  ln = 1, sizeline, M, N, nnz, k = 0;
  PetscBool   eof, toolong, pattern, integer, symmetric, skew;
  PetscCount  n = 0;
  int         nw, q;

  PetscFunctionBeginUser;
  fp = fopen(file, "r");
  PetscCheck(fp, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "Cannot open Matrix Market file %s: %s", file, strerror(errno));

  /* line 1: %%MatrixMarket matrix coordinate <field> <symmetry> (case-insensitive) */
  PetscCall(MMReadLine(fp, file, ln, line, sizeof(line), &eof, &toolong));
  PetscCheck(!eof, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "Matrix Market file %s is empty (expected the header \"%%%%MatrixMarket matrix coordinate ...\" on line 1)", file);
  nw = sscanf(line, "%63s %63s %63s %63s %63s", w[0], w[1], w[2], w[3], w[4]);
  for (q = 0; q < nw; q++) PetscCall(PetscStrtolower(w[q]));
  MMCheck(nw >= 1 && !strcmp(w[0], "%%matrixmarket"), ln, "bad header \"%s\" (expected \"%%%%MatrixMarket matrix coordinate <real|integer|pattern> <general|symmetric|skew-symmetric>\")", MMShown(line));
  MMCheck(nw == 5, ln, "incomplete header \"%s\" (expected %%%%MatrixMarket matrix coordinate <field> <symmetry>)", MMShown(line));
  MMCheck(!strcmp(w[1], "matrix"), ln, "object \"%s\" is not supported (only \"matrix\")", MMShown(w[1]));
  MMCheck(strcmp(w[2], "array"), ln, "dense \"array\" storage is not supported (only sparse \"coordinate\")");
  MMCheck(!strcmp(w[2], "coordinate"), ln, "unknown storage \"%s\" (expected \"coordinate\")", MMShown(w[2]));
  MMCheck(strcmp(w[3], "complex"), ln, "complex matrices are not supported (only real, integer and pattern)");
  MMCheck(!strcmp(w[3], "real") || !strcmp(w[3], "integer") || !strcmp(w[3], "pattern"), ln, "unknown field \"%s\" (expected real, integer or pattern)", MMShown(w[3]));
  MMCheck(strcmp(w[4], "hermitian"), ln, "hermitian matrices are not supported (only general, symmetric and skew-symmetric)");
  MMCheck(!strcmp(w[4], "general") || !strcmp(w[4], "symmetric") || !strcmp(w[4], "skew-symmetric"), ln, "unknown symmetry \"%s\" (expected general, symmetric or skew-symmetric)", MMShown(w[4]));
  pattern   = strcmp(w[3], "pattern") ? PETSC_FALSE : PETSC_TRUE;
  integer   = strcmp(w[3], "integer") ? PETSC_FALSE : PETSC_TRUE;
  symmetric = strcmp(w[4], "symmetric") ? PETSC_FALSE : PETSC_TRUE;
  skew      = strcmp(w[4], "skew-symmetric") ? PETSC_FALSE : PETSC_TRUE;

  /* comments, then the size line: <rows> <columns> <entries> */
  do {
    PetscCall(MMReadLine(fp, file, ++ln, line, sizeof(line), &eof, &toolong));
    MMCheck(!eof, ln - 1, "the file ends before the size line \"<rows> <columns> <entries>\"");
  } while (MMSkippable(line));
  sizeline = ln;
  {
    char *s = line;

    MMCheck(!toolong && MMInt(&s, &M) && MMInt(&s, &N) && MMInt(&s, &nnz) && MMAtEnd(s), ln, "expected the size line \"<rows> <columns> <entries>\", found \"%s\"", MMShown(line));
  }
  MMCheck(M > 0 && N > 0 && nnz >= 0, ln, "invalid sizes %" PetscInt64_FMT " x %" PetscInt64_FMT " with %" PetscInt64_FMT " entries", M, N, nnz);
  MMCheck(M <= PETSC_INT_MAX && N <= PETSC_INT_MAX, ln, "%" PetscInt64_FMT " x %" PetscInt64_FMT " is too large for %d-bit PetscInt", M, N, (int)(8 * sizeof(PetscInt)));
  MMCheck(nnz <= M * N, ln, "%" PetscInt64_FMT " entries announced, but a %" PetscInt64_FMT " x %" PetscInt64_FMT " matrix has at most %" PetscInt64_FMT, nnz, M, N, M * N);
  MMCheck(!(symmetric || skew) || M == N, ln, "a %s matrix must be square, not %" PetscInt64_FMT " x %" PetscInt64_FMT, w[4], M, N);
  mm->M = (PetscInt)M, mm->N = (PetscInt)N;
  mm->n = (PetscCount)((symmetric || skew) ? 2 * nnz : nnz); /* room for the mirrored entries */
  PetscCall(PetscMalloc3(mm->n, &mm->i, mm->n, &mm->j, mm->n, &mm->v));

  /* the entries: <row> <column> [<value>], 1-based; blank and comment lines are skipped */
  while (k < nnz) {
    PetscInt64 r, c, iv;
    double     val = 1.0;
    char      *s   = line;
    PetscBool  ok;

    PetscCall(MMReadLine(fp, file, ++ln, line, sizeof(line), &eof, &toolong));
    MMCheck(!eof, ln - 1, "the file ends after %" PetscInt64_FMT " of the %" PetscInt64_FMT " entries announced on line %" PetscInt64_FMT, k, nnz, sizeline);
    if (MMSkippable(line)) continue;
    MMCheck(!toolong, ln, "line too long for an entry");
    ok = MMInt(&s, &r) && MMInt(&s, &c) ? PETSC_TRUE : PETSC_FALSE;
    if (ok && integer) {
      ok  = MMInt(&s, &iv);
      val = ok ? (double)iv : 0.0;
    } else if (ok && !pattern) ok = MMReal(&s, &val);
    MMCheck(ok && MMAtEnd(s), ln, "expected \"<row> <column>%s\", found \"%s\"", pattern ? "" : (integer ? " <integer value>" : " <value>"), MMShown(line));
    MMCheck(!PetscIsInfOrNanReal((PetscReal)val), ln, "value is not a finite number: \"%s\"", MMShown(line));
    MMCheck(r >= 1 && r <= M, ln, "row index %" PetscInt64_FMT " is out of range 1..%" PetscInt64_FMT, r, M);
    MMCheck(c >= 1 && c <= N, ln, "column index %" PetscInt64_FMT " is out of range 1..%" PetscInt64_FMT, c, N);
    MMCheck(!skew || r != c, ln, "a skew-symmetric matrix stores no diagonal entries, found (%" PetscInt64_FMT ",%" PetscInt64_FMT ")", r, c);
    mm->i[n] = (PetscInt)(r - 1), mm->j[n] = (PetscInt)(c - 1), mm->v[n++] = (PetscScalar)val;
    if ((symmetric || skew) && r != c) mm->i[n] = (PetscInt)(c - 1), mm->j[n] = (PetscInt)(r - 1), mm->v[n++] = (PetscScalar)(skew ? -val : val);
    k++;
  }
  mm->n = n;
  /* only blank lines and comments may follow */
  for (;;) {
    PetscCall(MMReadLine(fp, file, ++ln, line, sizeof(line), &eof, &toolong));
    if (eof) break;
    MMCheck(MMSkippable(line), ln, "more entries than the %" PetscInt64_FMT " announced on line %" PetscInt64_FMT, nnz, sizeline);
  }
  PetscCheck(!fclose(fp), PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "Matrix Market file %s: error closing: %s", file, strerror(errno));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Frees what MMRead() allocated; harmless on an MMData that read nothing */
static PetscErrorCode MMFree(MMData *mm)
{
  PetscFunctionBeginUser;
  PetscCall(PetscFree3(mm->i, mm->j, mm->v));
  mm->n = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

#endif
