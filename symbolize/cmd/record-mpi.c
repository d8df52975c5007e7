/*
 * record-mpi.c - what `stepscope record` does for MPI programs.
 *
 * As one rank of `mpirun ... stepscope record -o RUN -- ./train`, every
 * rank's record writes into the same RUN: the directory is shared, so it
 * may already hold the other ranks' traces (each process writes its own
 * file, created with O_EXCL).  For a program that links libmpi, or for an
 * MPI launcher (`stepscope record -o RUN -- mpirun ... ./train`, whose
 * ranks inherit the environment), libstepscope-mpi (the PMPI wrappers, next
 * to libstepscope) joins LD_PRELOAD.  The wrappers carry no dependency on
 * libmpi, so a launcher that loads them is unaffected.
 */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmds.h"

int ss_record_mpi_rank(void)
{
	static const char *const vars[] = { "OMPI_COMM_WORLD_RANK", "PMI_RANK",
					    "PMIX_RANK", "SLURM_PROCID" };
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		const char *v = getenv(vars[i]);
		if (v && *v)
			return 1;
	}
	return 0;
}

/* 1 if the ELF file at path names libmpi.so* in its DT_NEEDED. */
static int ss_record_mpi_needed(const char *path)
{
	Elf_Scn *scn = NULL;
	int found = 0, fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *e;

	if (fd < 0)
		return 0;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	while (e && !found && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !sh.sh_entsize ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t k = 0; k < sh.sh_size / sh.sh_entsize && !found; k++) {
			GElf_Dyn dyn;
			const char *s;
			if (!gelf_getdyn(d, (int)k, &dyn) || dyn.d_tag != DT_NEEDED)
				continue;
			s = elf_strptr(e, sh.sh_link, dyn.d_un.d_val);
			found = s && !strncmp(s, "libmpi.so", 9);
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return found;
}

int ss_record_mpi_launcher(const char *prog)
{
	static const char *const names[] = { "mpirun", "mpiexec", "orterun", "prterun",
					     "mpiexec.hydra", "mpiexec.openmpi",
					     "mpirun.openmpi", "mpiexec.mpich",
					     "mpirun.mpich", "srun" };
	const char *base = strrchr(prog, '/') ? strrchr(prog, '/') + 1 : prog;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(base, names[i]))
			return 1;
	return 0;
}

void ss_record_mpi_preload(const char *lib, const char *prog_path)
{
	char mpi[4200];
	const char *slash = strrchr(lib, '/'), *cur = getenv("LD_PRELOAD");
	char *val;

	if (!slash || !prog_path ||
	    (!ss_record_mpi_needed(prog_path) && !ss_record_mpi_launcher(prog_path)))
		return;
	snprintf(mpi, sizeof(mpi), "%.*s/libstepscope-mpi.so", (int)(slash - lib), lib);
	if (access(mpi, R_OK)) {
		fprintf(stderr, "stepscope: %s links MPI but %s is missing (stepscope was built "
			"without MPI); MPI calls are not recorded\n", prog_path, mpi);
		return;
	}
	if (cur && strstr(cur, mpi))
		return;
	if (asprintf(&val, "%s%s%s", mpi, cur && *cur ? ":" : "", cur ? cur : "") < 0)
		return;
	setenv("LD_PRELOAD", val, 1);
	free(val);
}
