# petsc-gpumats: PETSc plug-in with the CMRS, SELL-P and BELLPACK GPU matrix formats.
#
#   make run     install missing packages, build, solve the built-in problem with every format
#   make test    install missing packages, build, run the test suite (no GPU needed)
#   make gpu-test   on a machine with an NVIDIA GPU: the GPU suite (tests/gpu/run.sh)
#   make conformance  PETSc's own test suite with the host types swapped in, against aij
#   make gpu-conformance  the same on a machine with an NVIDIA GPU: *cuda types against aijcusparse
#   make build-check  on a machine with an NVIDIA GPU: the device builds against the host's, and
#                  their first-build time against aijcusparse's (tests/gpu/build_check.sh)
#   make host-passes  the host passes of a GPU build, before and after issue 13, timed on this CPU
#   make solver-bench  PETSc's tutorials solved with every type, timed (examples/solverbench.sh)
#   make tune  autocuda's model calibrated on the GPU at hand (config/tuning/tune.sh)
#   make lib     build lib/libpetscgpumats.so only
#
# PETSc comes from PETSC_DIR/PETSC_ARCH (default: Debian's /usr/lib/petsc); its compilers and
# flags are used. CUDA sources are compiled with nvcc from CUDA_DIR for CUDA_ARCH into the same
# library whenever nvcc exists, so every kernel is compiled even on machines without a GPU.

PETSC_DIR ?= /usr/lib/petsc
PETSC_ARCH ?=
CUDA_DIR ?= /usr/local/cuda
CUDA_ARCH ?= 90

PETSCVARS := $(wildcard $(PETSC_DIR)/$(PETSC_ARCH)/lib/petsc/conf/petscvariables)
ifneq ($(PETSCVARS),)
include $(PETSCVARS)
endif

NVCC := $(wildcard $(CUDA_DIR)/bin/nvcc)
GPUMATS_CUDA ?= $(if $(NVCC),1,0)

# BUILD/LIBDIR let builds against several PETSc installations live side by side (tests/variants.sh)
BUILD ?= build
LIBDIR ?= lib
LIB := $(LIBDIR)/libpetscgpumats.so
OBJDIR := $(BUILD)/obj
BINDIR := $(BUILD)/bin

# every folder of src/mat/impls but common is a format (common/types/registry.hpp lists them for
# the library); the glue shared by all of them is common/<job>/*.cxx
FORMATS := $(filter-out common,$(notdir $(wildcard src/mat/impls/*)))
GLUE_SRC := $(wildcard src/mat/impls/common/*/*.cxx $(foreach f,$(FORMATS),src/mat/impls/$(f)/*.cxx))
CUDA_SRC := $(wildcard src/mat/impls/common/cuda/*.cu $(foreach f,$(FORMATS),src/mat/impls/$(f)/*.cu))
GLUE_OBJ := $(patsubst src/%.cxx,$(OBJDIR)/%.o,$(GLUE_SRC))
CUDA_OBJ := $(if $(filter 1,$(GPUMATS_CUDA)),$(patsubst src/%.cu,$(OBJDIR)/%.o,$(CUDA_SRC)))

# C++17 for the glue (PETSc's own CXX_FLAGS may ask for an older standard; the later flag wins)
GPUMATS_CXXFLAGS := $(CXX_FLAGS) -std=c++17 -O2 -Wall -Wextra -Wno-unused-parameter -fPIC -Iinclude $(PETSC_CC_INCLUDES) -DGPUMATS_HAVE_CUDA=$(GPUMATS_CUDA)
# --objdir-as-tempdir and -frandom-seed (in the rule: the source's path, distinct per file): nvcc
# writes its intermediate files' names and a random number (in anonymous namespaces' names) into the
# object; with these the same sources give the same bytes on every build, so the GPU suite's resume
# marks (tests/resume.sh, an md5 of the programs) hold on another machine with the same tools and
# the checkout at the same path (nvcc hashes the source's full path into those names too)
NVCCFLAGS := -std=c++17 -O3 -arch=sm_$(CUDA_ARCH) -ccbin $(firstword $(CXX) g++) -Xcompiler -fPIC --expt-relaxed-constexpr --objdir-as-tempdir
comma := ,
CUDA_LDFLAGS := $(if $(CUDA_OBJ),-L$(CUDA_DIR)/lib64 -Wl$(comma)-rpath$(comma)$(CUDA_DIR)/lib64 -lcusparse -lcudart)

.PHONY: all lib deps run test gpu-test conformance gpu-conformance build-check host-passes examples tests tutorials solver-bench bench tune clean check-petsc petsc-cuda

all: lib examples

deps:
	@bash config/install-deps.sh

check-petsc:
	@test -n "$(PETSCVARS)" || { echo "petsc-gpumats: no PETSc at PETSC_DIR=$(PETSC_DIR) PETSC_ARCH=$(PETSC_ARCH) (run 'make deps' or set PETSC_DIR/PETSC_ARCH)"; exit 1; }

lib: check-petsc $(LIB)

$(LIB): $(GLUE_OBJ) $(CUDA_OBJ)
	@mkdir -p $(LIBDIR)
	$(CXX) -shared -o $@ $^ $(CUDA_LDFLAGS) $(PETSC_WITH_EXTERNAL_LIB) -Wl,-rpath,$(PETSC_DIR)/$(PETSC_ARCH)/lib

# Every object depends on the headers its compiler actually read (-MMD: a .d file beside the
# object), not on every header of the tree, so touching one format's header recompiles that
# format's files only. An object without its .d file (a fresh tree, or one built before the .d
# files existed) is always rebuilt: the empty rule for the .d files makes a missing one count as new.
DEPFLAGS = -MMD -MP -MF $(@:.o=.d)
DEP_FILES := $(patsubst %.o,%.d,$(GLUE_OBJ) $(CUDA_OBJ))

$(OBJDIR)/%.o: src/%.cxx $(OBJDIR)/%.d makefile
	@mkdir -p $(dir $@)
	$(CXX) $(GPUMATS_CXXFLAGS) $(DEPFLAGS) -c $< -o $@

$(OBJDIR)/%.o: src/%.cu $(OBJDIR)/%.d
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -frandom-seed=$< $(DEPFLAGS) -c $< -o $@

# The kernel unit tests of the GPU suite (tests/gpu/test_kernels.cu): compiled with the library's
# flags (the same bytes on every build, as the suite's resume marks need) and linked with the
# library's CUDA objects; tests/gpu/link_kernels.sh makes it.
KERNEL_TEST_OBJ := $(OBJDIR)/tests/test_kernels.o
DEP_FILES += $(KERNEL_TEST_OBJ:.o=.d)

$(KERNEL_TEST_OBJ): tests/gpu/test_kernels.cu $(KERNEL_TEST_OBJ:.o=.d)
	@test -n "$(NVCC)" || { echo "petsc-gpumats: the kernel tests need nvcc (none at CUDA_DIR=$(CUDA_DIR))"; exit 1; }
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -frandom-seed=$< $(DEPFLAGS) -c $< -o $@

$(BINDIR)/test_kernels: $(KERNEL_TEST_OBJ) $(CUDA_OBJ)
	@mkdir -p $(BINDIR)
	$(NVCC) -arch=sm_$(CUDA_ARCH) -o $@ $^ -lcusparse

$(DEP_FILES):
-include $(wildcard $(DEP_FILES))

# ---- examples and tests -------------------------------------------------------------
EXAMPLE_CFLAGS := $(CC_FLAGS) -O2 -Wall -Iinclude $(PETSC_CC_INCLUDES)
EXAMPLE_LIBS := -L$(LIBDIR) -Wl,-rpath,$(abspath $(LIBDIR)) -lpetscgpumats $(PETSC_WITH_EXTERNAL_LIB) -Wl,-rpath,$(PETSC_DIR)/$(PETSC_ARCH)/lib

examples: lib $(BINDIR)/solve $(BINDIR)/coo_newton $(BINDIR)/values_update

$(BINDIR)/solve: examples/solve.c examples/mmread.h include/petscgpumats.h $(LIB)
	@mkdir -p $(BINDIR)
	$(CC) $(EXAMPLE_CFLAGS) -o $@ $< $(EXAMPLE_LIBS) -lm

# A Newton solve assembling its Jacobian with COO (examples/coo_newton.c): plain PETSc, not linked
# with the library, which it gets as PETSc's tutorials do (-dll_append, -dm_mat_type)
$(BINDIR)/coo_newton: examples/coo_newton.c
	@mkdir -p $(BINDIR)
	$(CC) $(EXAMPLE_CFLAGS) -o $@ $< $(PETSC_WITH_EXTERNAL_LIB) -Wl,-rpath,$(PETSC_DIR)/$(PETSC_ARCH)/lib -lm

# New values in the same pattern, timed against the first build (examples/values_update.c): plain
# PETSc as coo_newton
$(BINDIR)/values_update: examples/values_update.c
	@mkdir -p $(BINDIR)
	$(CC) $(EXAMPLE_CFLAGS) -o $@ $< $(PETSC_WITH_EXTERNAL_LIB) -Wl,-rpath,$(PETSC_DIR)/$(PETSC_ARCH)/lib -lm

# The MatMult benchmark (examples/bench.cu): `make bench BENCH_ARGS="-matrix block3 -csv r.csv"`
# builds it and runs it on this machine's GPU. Not part of `all`/`examples`: it needs nvcc and
# cuSPARSE. nvcc compiles (PETSc's C++ compiler as host compiler); PETSc's C++ compiler links,
# because PETSc's link line carries -Wl,... flags that nvcc does not take.
BENCH_ARGS ?=
BENCH_NVCCFLAGS := -std=c++17 -O3 -arch=sm_$(CUDA_ARCH) -ccbin $(firstword $(CXX) g++) -Iinclude $(PETSC_CC_INCLUDES)
BENCH_LIBS := $(EXAMPLE_LIBS) -L$(CUDA_DIR)/lib64 -Wl,-rpath,$(CUDA_DIR)/lib64 -lcusparse -lcudart -lm

bench: lib $(BINDIR)/bench
	$(BINDIR)/bench $(BENCH_ARGS)

$(OBJDIR)/bench.o: examples/bench.cu examples/mmread.h include/petscgpumats.h
	@test -n "$(NVCC)" || { echo "petsc-gpumats: the benchmark needs nvcc (none at CUDA_DIR=$(CUDA_DIR))"; exit 1; }
	@mkdir -p $(dir $@)
	$(NVCC) $(BENCH_NVCCFLAGS) -c $< -o $@

$(BINDIR)/bench: $(OBJDIR)/bench.o $(LIB)
	@mkdir -p $(BINDIR)
	$(firstword $(CXX) g++) -o $@ $< $(BENCH_LIBS)

# the per-GPU tuning measured on the GPU at hand (config/tuning/tune.sh: autocuda's model, CMRS's
# kernels for even rows, BELLPACK's execution-time model): a few minutes on one GPU
tune: lib $(BINDIR)/bench $(BINDIR)/bellpack-model
	@BINDIR=$(BINDIR) bash config/tuning/tune.sh
	@$(MAKE) --no-print-directory lib

# Offline benchmarks of BELLPACK's execution-time model (config/tuning/bellpack_model.cu, run by
# make tune): PETSc-free, it links the library's CUDA objects only.
MODEL_OBJ := $(OBJDIR)/mat/impls/bellpack/cuda.o $(OBJDIR)/mat/impls/bellpack/dictionary_kernels.o $(OBJDIR)/mat/impls/common/cuda/device.o $(OBJDIR)/mat/impls/common/cuda/csr.o

$(BINDIR)/bellpack-model: config/tuning/bellpack_model.cu $(MODEL_OBJ)
	@mkdir -p $(BINDIR)
	$(NVCC) -std=c++17 -O3 -arch=sm_$(CUDA_ARCH) -o $@ $^

TEST_C := $(wildcard tests/petsc/test_*.c)
TEST_BIN := $(patsubst tests/petsc/%.c,$(BINDIR)/%,$(TEST_C)) $(BINDIR)/test_formats $(BINDIR)/test_transforms $(BINDIR)/test_calibration

# PETSc's own tutorials, compiled unmodified from the PETSc that builds us and loaded with
# -dll_append: real clients that never heard of this library. Installed PETSc (Debian) keeps them
# under share/petsc/examples/src, a source tree (the CUDA build) under src. ksp: ex2 (2D Laplacian,
# -mat_type), ex45 (3D Laplacian on a DMDA, -dm_mat_type), ex56 (3D elasticity, GAMG's own test);
# snes: ex19 (driven cavity, DMDA with 4 dof, Newton). The folders share names (ex2.c in both, and
# PETSc 3.25's ksp has an ex19.c too), so tutorial-<name> is the snes one exactly for the names in
# SNES_TUTORIALS (a static pattern rule, which wins over the ksp pattern rule) and ksp otherwise.
EXAMPLES_SRC := $(firstword $(wildcard $(PETSC_DIR)/share/petsc/examples/src $(PETSC_DIR)/src))
TUTORIAL_DIR ?= $(EXAMPLES_SRC)/ksp/ksp/tutorials
SNES_TUTORIAL_DIR ?= $(EXAMPLES_SRC)/snes/tutorials
SNES_TUTORIALS := ex19
TUTORIALS := $(addprefix $(BINDIR)/tutorial-,ex2 ex45 ex56 $(SNES_TUTORIALS))

tests: examples $(TEST_BIN) $(TUTORIALS)

tutorials: lib $(TUTORIALS)

# The solver benchmark (examples/solverbench.sh): PETSc's tutorials with every type, -log_view into
# build/solverbench/solverbench.{csv,md}. It builds what it needs itself (and, with a GPU but no CUDA
# PETSc, takes config/build-petsc-cuda.sh's, as gpu-test does). SOLVERBENCH_* variables: see the script.
solver-bench:
	@bash examples/solverbench.sh

TUTORIAL_BUILD = $(CC) $(CC_FLAGS) -O2 -w $(PETSC_CC_INCLUDES) -o $@ $< $(PETSC_WITH_EXTERNAL_LIB) -Wl,-rpath,$(PETSC_DIR)/$(PETSC_ARCH)/lib -lm

$(addprefix $(BINDIR)/tutorial-,$(SNES_TUTORIALS)): $(BINDIR)/tutorial-%: $(SNES_TUTORIAL_DIR)/%.c
	@mkdir -p $(BINDIR)
	$(TUTORIAL_BUILD)

$(BINDIR)/tutorial-%: $(TUTORIAL_DIR)/%.c
	@mkdir -p $(BINDIR)
	$(TUTORIAL_BUILD)

$(BINDIR)/test_%: tests/petsc/test_%.c tests/petsc/check.h tests/petsc/testmats.h include/petscgpumats.h $(LIB)
	@mkdir -p $(BINDIR)
	$(CC) $(EXAMPLE_CFLAGS) -o $@ $< $(EXAMPLE_LIBS) -lm

$(BINDIR)/test_formats: tests/core/test_formats.cpp $(wildcard tests/common/*.hpp src/mat/impls/*/*.hpp src/mat/impls/common/core/*.hpp)
	@mkdir -p $(BINDIR)
	g++ -std=c++17 -O2 -Wall -o $@ $<

$(BINDIR)/test_transforms: tests/core/test_transforms.cpp $(wildcard tests/common/*.hpp src/mat/impls/common/core/*.hpp)
	@mkdir -p $(BINDIR)
	g++ -std=c++17 -O2 -Wall -o $@ $<

$(BINDIR)/test_calibration: tests/core/test_calibration.cpp $(wildcard tests/common/*.hpp src/mat/impls/auto/*.hpp src/mat/impls/cmrs/*.hpp)
	@mkdir -p $(BINDIR)
	g++ -std=c++17 -O2 -Wall -o $@ $<

# The top-level commands install what is missing first, then re-read PETSc's variables.
run: deps
	@$(MAKE) --no-print-directory examples
	@bash examples/run.sh

test: deps
	@$(MAKE) --no-print-directory tests
	@bash tests/run.sh

gpu-test:
	@bash tests/gpu/run.sh

# PETSc's test harness over its own cases, once with PETSc's type swapped in and once per type of
# ours, each case's output compared with the reference run's (tests/conformance/run.sh). The CPU
# one: Debian's PETSc 3.18, the tutorials of ksp/ksp, snes and ts, mat/tests, ksp/ksp/tests, ksp/pc,
# and the other folders --wide names (snes, ts and dm tests; mat, DM and TAO tutorials);
# CONFORMANCE_ARGS adds options or replaces the selection, e.g.
# CONFORMANCE_ARGS="--types sellp ksp/ksp/tutorials". The GPU one builds the library against PETSc
# with CUDA itself (config/build-petsc-cuda.sh's, or PETSC_DIR/PETSC_ARCH).
CONFORMANCE_ARGS ?=
conformance: deps
	@$(MAKE) --no-print-directory lib
	@bash tests/conformance/run.sh --wide $(CONFORMANCE_ARGS)

gpu-conformance:
	@bash tests/conformance/run.sh --gpu $(CONFORMANCE_ARGS)

build-check:
	@bash tests/gpu/build_check.sh

# examples/host_passes.cpp: PETSc-free, the format cores only
$(BINDIR)/host_passes: examples/host_passes.cpp $(wildcard src/mat/impls/*/core.hpp src/mat/impls/common/core/*.hpp)
	@mkdir -p $(BINDIR)
	g++ -std=c++17 -O2 -Wall -o $@ $<

host-passes: $(BINDIR)/host_passes
	$(BINDIR)/host_passes

petsc-cuda:
	@bash config/build-petsc-cuda.sh

clean:
	rm -rf build lib
