/*
 * lib-nvml-fake.c - a stand-in for libnvidia-ml.so.1 for the memory
 * poller's end-to-end test (test-memory-poll.c), which builds it with
 * plain `gcc -shared -fPIC` (no stepscope) and names it in
 * STEPSCOPE_NVML_LIBRARY.
 *
 * Design: it defines the NVML functions runtime/memory.c looks up and
 * answers them from a script, the file named by $SS_FAKE_NVML_SCRIPT,
 * read at nvmlInit_v2.  Lines (blank lines and '#' comments ignored):
 *
 *   devices N                      nvmlDeviceGetCount_v2 says N (1 .. 8)
 *   DEV CALL USED TOTAL PROC       from the CALL-th nvmlDeviceGetMemoryInfo
 *                                  of device DEV on (1-based), the device
 *                                  has USED of TOTAL bytes in use, PROC of
 *                                  them this process's; until a later line
 *                                  of the same device (in CALL order)
 *                                  takes over
 *
 * The process list of a device holds the calling pid with PROC bytes and
 * pid 1 (which exists, but is not us) with USED - PROC: the poller must
 * pick its own pid out.  No script: 2 devices, 1 GiB of 16 GiB used, half
 * of it ours.  Device DEV's UUID is "GPU-fake-DEV".
 *
 * Never: call stepscope or anything instrumented; it is a test double only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FAKE_MAX_DEV 8
#define FAKE_MAX_LINES 64

typedef int nvml_return;
#define NVML_OK 0
#define NVML_ERROR_INVALID_ARGUMENT 2
#define NVML_ERROR_UNINITIALIZED 1
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_ERROR_NOT_FOUND 6

struct fake_line {
	unsigned long long call, used, total, proc;
};

struct fake_dev {
	struct fake_line line[FAKE_MAX_LINES];
	int nlines;
	unsigned long long calls;   /* nvmlDeviceGetMemoryInfo calls so far */
	struct fake_line now;       /* values of the last call */
};

/* The layouts of nvmlMemory_t and nvmlProcessInfo_v2_t. */
struct fake_memory {
	unsigned long long total, free, used;
};

struct fake_proc {
	unsigned int pid;
	unsigned long long used_gpu_memory;
	unsigned int gpu_instance_id, compute_instance_id;
};

static struct fake_dev devs[FAKE_MAX_DEV];
static unsigned ndevs;
static int inited;

static void fake_defaults(void)
{
	ndevs = 2;
	for (unsigned i = 0; i < ndevs; i++) {
		devs[i].line[0] = (struct fake_line){ 1, 1ull << 30, 16ull << 30,
						      1ull << 29 };
		devs[i].nlines = 1;
	}
}

/* Read the script; -1 (and a line on stderr) when it is unusable. */
static int fake_load(const char *path)
{
	FILE *f = fopen(path, "r");
	char buf[256];
	int lineno = 0;

	if (!f) {
		fprintf(stderr, "lib-nvml-fake: cannot open %s\n", path);
		return -1;
	}
	while (fgets(buf, sizeof(buf), f)) {
		unsigned dev;
		struct fake_line l;
		lineno++;
		char *p = buf + strspn(buf, " \t");
		if (*p == '#' || *p == '\n' || !*p)
			continue;
		if (sscanf(p, "devices %u", &ndevs) == 1 && ndevs <= FAKE_MAX_DEV)
			continue;
		if (sscanf(p, "%u %llu %llu %llu %llu", &dev, &l.call, &l.used,
			   &l.total, &l.proc) == 5 && dev < FAKE_MAX_DEV &&
		    devs[dev].nlines < FAKE_MAX_LINES && l.proc <= l.used &&
		    l.used <= l.total) {
			devs[dev].line[devs[dev].nlines++] = l;
			continue;
		}
		fprintf(stderr, "lib-nvml-fake: %s:%d: cannot read '%s'\n", path,
			lineno, p);
		fclose(f);
		return -1;
	}
	fclose(f);
	return 0;
}

nvml_return nvmlInit_v2(void)
{
	const char *path = getenv("SS_FAKE_NVML_SCRIPT");

	if (inited)
		return NVML_OK;
	memset(devs, 0, sizeof(devs));
	if (!path || !*path)
		fake_defaults();
	else if (fake_load(path))
		return 999; /* NVML_ERROR_UNKNOWN */
	inited = 1;
	return NVML_OK;
}

nvml_return nvmlShutdown(void)
{
	return NVML_OK;
}

nvml_return nvmlDeviceGetCount_v2(unsigned int *count)
{
	if (!inited)
		return NVML_ERROR_UNINITIALIZED;
	*count = ndevs;
	return NVML_OK;
}

nvml_return nvmlDeviceGetHandleByIndex_v2(unsigned int index, void **dev)
{
	if (!inited)
		return NVML_ERROR_UNINITIALIZED;
	if (index >= ndevs)
		return NVML_ERROR_INVALID_ARGUMENT;
	*dev = &devs[index];
	return NVML_OK;
}

nvml_return nvmlDeviceGetHandleByUUID(const char *uuid, void **dev)
{
	unsigned index;
	char end;

	if (!inited)
		return NVML_ERROR_UNINITIALIZED;
	if (sscanf(uuid, "GPU-fake-%u%c", &index, &end) != 1 || index >= ndevs)
		return NVML_ERROR_NOT_FOUND;
	*dev = &devs[index];
	return NVML_OK;
}

static struct fake_dev *fake_dev(void *h)
{
	struct fake_dev *d = h;

	if (!inited || d < devs || d >= devs + ndevs)
		return NULL;
	return d;
}

nvml_return nvmlDeviceGetMemoryInfo(void *h, struct fake_memory *m)
{
	struct fake_dev *d = fake_dev(h);

	if (!d || !m)
		return NVML_ERROR_INVALID_ARGUMENT;
	d->calls++;
	for (int i = 0; i < d->nlines; i++)
		if (d->line[i].call <= d->calls)
			d->now = d->line[i];
	m->total = d->now.total;
	m->used = d->now.used;
	m->free = d->now.total - d->now.used;
	return NVML_OK;
}

/* The list for the values of the last nvmlDeviceGetMemoryInfo call. */
nvml_return nvmlDeviceGetComputeRunningProcesses_v3(void *h, unsigned int *count,
						    struct fake_proc *infos)
{
	struct fake_dev *d = fake_dev(h);
	unsigned n = 0;

	if (!d || !count)
		return NVML_ERROR_INVALID_ARGUMENT;
	n = (d->now.used > d->now.proc) + (d->now.proc > 0);
	if (*count < n || !infos) {
		*count = n;
		return NVML_ERROR_INSUFFICIENT_SIZE;
	}
	n = 0;
	if (d->now.used > d->now.proc)
		infos[n++] = (struct fake_proc){ 1, d->now.used - d->now.proc,
						 0, 0 };
	if (d->now.proc)
		infos[n++] = (struct fake_proc){ (unsigned)getpid(), d->now.proc,
						 0, 0 };
	*count = n;
	return NVML_OK;
}
