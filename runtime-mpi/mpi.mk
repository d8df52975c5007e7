# runtime-mpi/mpi.mk - libstepscope-mpi, the PMPI wrapper library, built
# only when mpicc (and so the MPI headers) is found; included by the top
# Makefile.  Compiled with mpicc's include flags but linked without libmpi
# (every MPI symbol is weak; see runtime-mpi/mpi.c).
MPICC   ?= mpicc
MPI_INC := $(shell $(MPICC) -showme:compile 2>/dev/null || $(MPICC) -compile_info 2>/dev/null | sed 's/^[^ ]* //')
HAVE_MPI := $(if $(shell command -v $(MPICC) 2>/dev/null),1,)

# `make test` builds it through `$(MAKE) mpi-lib` after installing the test
# packages (openmpi among them), when this file is read again.
.PHONY: mpi-lib
ifeq ($(HAVE_MPI),1)
all: $(B)/lib/libstepscope-mpi.so
mpi-lib: $(B)/lib/libstepscope-mpi.so
$(B)/lib/libstepscope-mpi.so: runtime-mpi/mpi.c runtime-mpi/mpi.mk | $(DEPS_OK)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -std=gnu11 -g -O2 -Wall -Wextra -Wno-unused-parameter -fPIC \
		-fvisibility=hidden -fno-instrument-functions $(MPI_INC) -shared \
		-o $@ $< -ldl
else
$(info   MPI     mpicc not found: libstepscope-mpi is not built (apt-get install libopenmpi-dev))
mpi-lib:
	@echo "  MPI     mpicc not found: libstepscope-mpi not built"
endif
