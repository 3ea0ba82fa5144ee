# The differences between a case's output with our type and with PETSc's that a conformance run
# accepts (sourced by petscdiff.sh, only after the two outputs were found to differ). Each entry:
#
#   accept NAME REASON SED-SCRIPT [CASE-GLOB]
#
# SED-SCRIPT (sed -E) is applied to both outputs, the reference type's and ours, and the case passes
# if they agree afterwards. CASE-GLOB limits an entry to the cases whose tap label matches it.
# Keep this list short, and every entry to text that names our type or that our own viewer adds:
# an entry must never touch an iteration count, a residual, an error or a norm: a case that takes
# other iterations or reaches another residual fails, whatever its type names.
#
# Set by run.sh: CONFORMANCE_OURS, the suffix of our concrete type names after "seqaij"/"mpiaij" on
# this platform (host: (cmrs|padsell|bellpack|auto), GPU: the same with "cuda"); CONFORMANCE_REF_AIJ,
# the reference type's ("" for aij, "cusparse" for aijcusparse); CONFORMANCE_OURS_ROOT and
# CONFORMANCE_REF_ROOT, the names given to -mat_type ((cmrs|sellp|bellpack|auto)[cuda], aij[cusparse]).
# shellcheck shell=bash

ours=${CONFORMANCE_OURS:?} ref=${CONFORMANCE_REF_AIJ?}
ours_root=${CONFORMANCE_OURS_ROOT:?} ref_root=${CONFORMANCE_REF_ROOT:?}

# -ksp_view, -mat_view, -snes_view ... print the matrix's type, and tests print it themselves
# (MatGetType). Only our exact concrete names are mapped, to the reference's: a matrix that stayed
# plain AIJ where the reference run had its GPU type still differs.
accept type-names "views name the matrix type, ours where PETSc's prints its own" \
  "s/\\b(seq|mpi)aij${ours}\\b/\\1aij${ref}/g"

# The matrix view at ASCII_INFO (what -ksp_view and -mat_view ::ascii_info print) adds our format's
# lines after AIJ's (view.cxx ViewOperator/ViewUpdates/ViewTranspose, seq.cxx and mpi.cxx View):
# the format's parameters and footprint, where it lives, its transpose and update modes, and for
# MPI types the ghost exchange and each rank's place. AIJ's own lines stay and are compared.
accept own-view-lines "our matrix view adds lines about the format after AIJ's" \
  '/^ *(CMRS|SELL-P|BELLPACK|AUTO) \((host|CUDA)\) [a-z -]+: /d
   /^ *[0-9]+ x [0-9]+, [0-9]+ nonzeros, [0-9]+ stored entries \(fill ratio /d
   /^ *all ranks: [0-9]+ rows, [0-9]+ nonzeros, [0-9]+ stored entries \(fill ratio /d
   /^ *on (no GPU|GPU [0-9]+ of [0-9]+, .*)$/d
   /^ *transpose products: .*\(-mat_gpumats_transpose /d
   /^ *same-pattern changes: .*\(-mat_gpumats_values_update /d
   /^ *ghost exchange: /d
   /^ *rank [0-9]+ \(node-local rank [0-9]+ of [0-9]+\): /d'

# -info: the loading of our library (-dll_append, which only our runs carry) and our own messages,
# by the functions of ours that print them (src/mat/impls, PetscInfo), under the object's class
# (3.18: "<mat>") or class and type (3.25: "<mat:seqaij>"). PETSc's lines stay and are compared.
accept own-info-lines "-info prints our library's loading and our own messages" \
  '/^\[[0-9]+\] <sys> Petsc[A-Za-z]+\(\): .*libpetscgpumats/d
   /^\[[0-9]+\] <[a-z]+(:[a-z0-9]+)?> (AdoptDM|BindToCPU|BuildAtThisAssembly|BuildFromSeqAIJ|BuildInAssembly|ConvertAsAIJ|CreateInterpolationInType|DeviceAXPY|NotSubset|ProductAsAIJ|ProductSetFromOptions|ProductSymbolic|UpdateValuesFromDevice|UploadPinned|get)\(\): /d'

# The swap's own options where a program lists its options (an error message's option list,
# -options_left's "Option left"): the type given, and -dll_append, which only our runs carry.
accept swap-options "programs list the options, the swap's among them" \
  "s/(Option left: name:-(dm_)?mat_type value: )${ours_root}\\b/\\1${ref_root}/
   s/(PETSC ERROR: -(dm_)?mat_type )${ours_root}[[:space:]]*\$/\\1${ref_root}/
   /(PETSC ERROR: |Option left: name:)-dll_append /d"

# ts/tutorials ex3 prints its solver through a string viewer into a fixed buffer, which cuts the
# longer type names short (seqaijc...) where aij's fits.
accept cut-type-name "ts ex3 cuts the type name short in its fixed-size string viewer" \
  's/MatType: (seq|mpi)aij[a-z]*/MatType: \1aij/g' 'ts_tutorials-ex3_stringview'
