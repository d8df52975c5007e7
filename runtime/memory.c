/*
 * memory.c - the memory poller: host RSS and CUDA device memory, sampled
 * in the background while the program runs (memory.enabled: true).
 *
 * Design: one named thread, "stepscope-mem", started by the library
 * constructor and stopped by ss_memory_stop() (atexit and the destructor)
 * with a bounded wait.  It wakes every memory.interval_ms and at every
 * step boundary: ss_memory_on_step() runs on the training thread with
 * ss_rt.lock held, so it only stores the request in atomics and writes an
 * eventfd (non-blocking; a full counter just means "already woken").
 * Each sample reads /proc/self/status (VmRSS, VmHWM) and, through NVML
 * found with dlopen() at run time, each visible GPU's used/total memory and
 * this process's share of it ($STEPSCOPE_NVML_LIBRARY names another
 * library to load instead: the e2e tests' stand-in NVML).  Samples go
 * into the trace as SS_META_COUNTER records (a track's value is written
 * only when it changed), taken under ss_rt.lock for the few stores that
 * takes.  Every memory.every_n_steps-th step also adds an entry to
 * memory_profile.json in the run directory, which is rewritten whole
 * (temporary file + rename) so a crash always leaves a valid file.
 *
 * A process samples only once it has a trace file (its first event or
 * step), like the rest of the runtime: shells and launchers that merely
 * inherit the preload write nothing and never load NVML.
 *
 * Never: block the training thread, create a CUDA context or call the CUDA
 * runtime/driver API (NVML only), record function events, use stdio in
 * the loop, or keep the process from exiting for more than two seconds.
 *
 * The pure pieces (parsing /proc/self/status and CUDA_VISIBLE_DEVICES,
 * finding this pid in NVML's process list, formatting a JSON entry) are
 * plain functions in memory-parse.c; tests/unit/test-memory.c includes
 * both files.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "nvml.h"
#include "memory-parse.h"

/* ------------------------------------------------------------ state */

struct ss_mem_nvml {
	void *dl;
	ss_nvml_init_fn init;
	ss_nvml_count_fn count;
	ss_nvml_by_index_fn by_index;
	ss_nvml_by_uuid_fn by_uuid;       /* may be NULL */
	ss_nvml_meminfo_fn meminfo;
	ss_nvml_procs_fn procs;           /* may be NULL */
	size_t proc_stride;               /* layout `procs` fills */
};

/* Counter tracks: host.rss, host.rss_peak, then used/total/process per GPU. */
#define SS_MEM_TRACKS (2 + 3 * SS_MEM_MAX_DEV)

static struct {
	/* set by start/stop/fork, on the program's threads */
	int started;                      /* ss_memory_start ran: efd is valid */
	int restart;                      /* forked child: poller not started yet */
	int running;                      /* the poller thread exists here */
	pthread_t thread;
	int efd;
	uint64_t every_n;
	uint64_t interval_ns;
	atomic_int stop;
	atomic_int stopped;               /* ss_memory_stop ran */
	atomic_uint_fast64_t want_entry;  /* step + 1 awaiting an entry, 0 none */
	atomic_uint_fast64_t skipped;     /* entries lost to a busy poller */
	/* owned by the poller thread (by ss_memory_stop once it has gone) */
	int profiled;                     /* this process has a trace file */
	int nvml_tried;
	int nvml_ready;
	int nvml_inited;                  /* nvmlInit_v2 succeeded here */
	int atexit_done;
	struct ss_mem_nvml nv;
	int ndev;
	ss_nvml_device dev_h[SS_MEM_MAX_DEV];
	int dev_index[SS_MEM_MAX_DEV];
	uint64_t dev_peak[SS_MEM_MAX_DEV];
	uint64_t last[SS_MEM_TRACKS];
	unsigned char have_last[SS_MEM_TRACKS];
	char *json;                       /* entries joined by ",\n" */
	size_t json_len, json_cap;
	uint64_t nentries;
	char json_path[4200];             /* "" until the first write claims one */
	/* info lines said (kept across fork: once per process tree line) */
	int said_nvml, said_nomatch, said_noval, said_json;
} mem = { .efd = -1 };

static int (*mem_nvml_loader)(struct ss_mem_nvml *, char *, size_t);
static const char *mem_nvml_lib = SS_MEM_NVML_LIB;
/* $STEPSCOPE_NVML_LIBRARY, copied at start: replaces the default library
 * (a stand-in NVML for tests without a GPU); "" when unset */
static char mem_nvml_env[1024];

/* ------------------------------------------------------------ NVML */

/* dlopen NVML and find its functions.  0, or -1 with the info line. */
static int nvml_load(struct ss_mem_nvml *n, char *why, size_t len)
{
	const char *lib = mem_nvml_lib;
	int chosen = mem_nvml_env[0] && !strcmp(mem_nvml_lib, SS_MEM_NVML_LIB);
	if (chosen)
		lib = mem_nvml_env;
	if (!n->dl)
		n->dl = ss_dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!n->dl && chosen) {
		const char *e = ss_dlerror();
		snprintf(why, len, "memory: cannot load STEPSCOPE_NVML_LIBRARY=%s "
			 "(%s); polling host memory only", lib, e ? e : "dlopen failed");
		return -1;
	}
	if (!n->dl) {
		snprintf(why, len, "memory: no NVIDIA driver (%s not found); "
			 "polling host memory only", lib);
		return -1;
	}
	n->init = (ss_nvml_init_fn)dlsym(n->dl, "nvmlInit_v2");
	n->count = (ss_nvml_count_fn)dlsym(n->dl, "nvmlDeviceGetCount_v2");
	n->by_index = (ss_nvml_by_index_fn)dlsym(n->dl, "nvmlDeviceGetHandleByIndex_v2");
	n->by_uuid = (ss_nvml_by_uuid_fn)dlsym(n->dl, "nvmlDeviceGetHandleByUUID");
	n->meminfo = (ss_nvml_meminfo_fn)dlsym(n->dl, "nvmlDeviceGetMemoryInfo");
	static const char *const procs[] = {
		"nvmlDeviceGetComputeRunningProcesses_v3",
		"nvmlDeviceGetComputeRunningProcesses_v2",
		"nvmlDeviceGetComputeRunningProcesses",
	};
	n->procs = NULL;
	for (int i = 0; i < 3 && !n->procs; i++) {
		n->procs = (ss_nvml_procs_fn)dlsym(n->dl, procs[i]);
		n->proc_stride = i < 2 ? sizeof(struct ss_nvml_proc_v2)
				       : sizeof(struct ss_nvml_proc_v1);
	}
	if (!n->init || !n->count || !n->by_index || !n->meminfo) {
		snprintf(why, len, "memory: %s lacks nvmlInit_v2 or the device "
			 "memory calls (driver too old); polling host memory only",
			 lib);
		return -1;
	}
	return 0;
}

static void say_nvml(const char *what)
{
	if (!mem.said_nvml)
		ss_warn("%s", what);
	mem.said_nvml = 1;
}

/* Load and start NVML, pick the GPUs CUDA would show this process. */
static void nvml_start(void)
{
	char why[512];
	mem.nvml_tried = 1;
	int (*load)(struct ss_mem_nvml *, char *, size_t) =
		mem_nvml_loader ? mem_nvml_loader : nvml_load;
	if (load(&mem.nv, why, sizeof(why))) {
		say_nvml(why);
		return;
	}
	if (!mem.nvml_inited) {
		ss_nvml_return r = mem.nv.init();
		if (r != SS_NVML_SUCCESS) {
			snprintf(why, sizeof(why), "memory: NVML did not start "
				 "(nvmlInit_v2 error %d: no GPU or driver not "
				 "loaded?); polling host memory only", r);
			say_nvml(why);
			return;
		}
		mem.nvml_inited = 1;
	}
	/* exit() runs atexit handlers before library destructors: stop the
	 * poller before libnvidia-ml's destructors can run under it */
	if (!mem.atexit_done && !atexit(ss_memory_stop))
		mem.atexit_done = 1;
	unsigned count = 0;
	if (mem.nv.count(&count) != SS_NVML_SUCCESS)
		count = 0;
	mem.ndev = 0;
	const char *env = secure_getenv("CUDA_VISIBLE_DEVICES");
	if (env) {
		char ids[SS_MEM_MAX_DEV][SS_MEM_ID_MAX];
		int n = ss_memory_parse_visible(env, ids, SS_MEM_MAX_DEV);
		for (int i = 0; i < n; i++) {
			ss_nvml_device h = NULL;
			ss_nvml_return r = -1;
			if (ids[i][0] >= '0' && ids[i][0] <= '9') {
				unsigned idx = (unsigned)atoi(ids[i]);
				if (idx >= count)
					break; /* CUDA stops at an invalid index */
				r = mem.nv.by_index(idx, &h);
			} else if (mem.nv.by_uuid) {
				r = mem.nv.by_uuid(ids[i], &h);
			}
			if (r != SS_NVML_SUCCESS)
				continue; /* keep the others' CUDA indices */
			mem.dev_h[mem.ndev] = h;
			mem.dev_index[mem.ndev++] = i;
		}
	} else {
		for (unsigned i = 0; i < count && mem.ndev < SS_MEM_MAX_DEV; i++) {
			ss_nvml_device h = NULL;
			if (mem.nv.by_index(i, &h) != SS_NVML_SUCCESS)
				continue;
			mem.dev_h[mem.ndev] = h;
			mem.dev_index[mem.ndev++] = (int)i;
		}
	}
	if (!mem.ndev) {
		snprintf(why, sizeof(why), "memory: NVML sees no GPU%s; polling "
			 "host memory only",
			 env ? " in CUDA_VISIBLE_DEVICES" : "");
		say_nvml(why);
		return;
	}
	mem.nvml_ready = 1;
}

/* Is any pid of an NVML process list a process we can see?  If none is,
 * the list is in another pid namespace (a container) and cannot name us. */
static int any_pid_visible(const void *infos, size_t stride, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		unsigned pid = ss_memory_proc_pid(infos, stride, i);
		if (pid && (kill((pid_t)pid, 0) == 0 || errno == EPERM))
			return 1;
	}
	return 0;
}

static void sample_gpu(int i, struct ss_mem_dev *d)
{
	static struct ss_nvml_proc_v2 infos[SS_MEM_MAX_PROCS];
	struct ss_nvml_memory m;
	memset(d, 0, sizeof(*d));
	d->index = mem.dev_index[i];
	if (mem.nv.meminfo(mem.dev_h[i], &m) != SS_NVML_SUCCESS)
		return;
	d->ok = 1;
	d->used = m.used;
	d->total = m.total;
	d->in_use = m.used;
	int found = -2;
	unsigned n = SS_MEM_MAX_PROCS;
	if (mem.nv.procs && mem.nv.procs(mem.dev_h[i], &n, infos) == SS_NVML_SUCCESS)
		found = ss_memory_proc_used(infos, mem.nv.proc_stride, n,
					    (unsigned)getpid(), &d->proc);
	if (found == 1) {
		d->matched = 1;
		d->in_use = d->proc;
	} else if (found == 0) {
		if (!mem.said_noval)
			ss_warn("memory: cuda:%d: the driver gives no per-process "
				"memory; memory_profile.json reports device-wide "
				"use", d->index);
		mem.said_noval = 1;
	} else if (found == -1 && n && !any_pid_visible(infos, mem.nv.proc_stride, n)) {
		if (!mem.said_nomatch)
			ss_warn("memory: cuda:%d: this process (pid %d) is not in "
				"NVML's process list, whose pids are not ours (a "
				"container?); memory_profile.json reports "
				"device-wide use", d->index, (int)getpid());
		mem.said_nomatch = 1;
	} else if (found == -1) {
		d->in_use = 0; /* other processes' memory, none of ours */
	}
	/* found == -2: no process list at all: device-wide */
	if (d->in_use > mem.dev_peak[i])
		mem.dev_peak[i] = d->in_use;
	d->peak = mem.dev_peak[i];
}

/* ------------------------------------------------------------ sampling */

static int read_host(struct ss_mem_host *h)
{
	static char buf[8192];
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t n = 0;
	ssize_t r;
	while (n < sizeof(buf) - 1 && (r = read(fd, buf + n, sizeof(buf) - 1 - n)) > 0)
		n += (size_t)r;
	close(fd);
	buf[n] = 0;
	return ss_memory_parse_status(buf, h);
}

static void take_sample(struct ss_mem_sample *s)
{
	s->ts_ns = ss_clock_realtime_ns();
	s->ticks = ss_clock_now();
	s->host_ok = !read_host(&s->host);
	s->ndev = 0;
	if (mem.nvml_ready)
		for (int i = 0; i < mem.ndev; i++)
			sample_gpu(i, &s->dev[s->ndev++]);
}

/* Lock held.  A track's value goes into the trace when it changed. */
static void put_counter(int slot, const char *track, uint64_t v, uint64_t ts)
{
	if (mem.have_last[slot] && mem.last[slot] == v)
		return;
	struct ss_meta_counter c;
	memset(&c, 0, sizeof(c));
	c.value = v;
	snprintf(c.track, sizeof(c.track), "%s", track);
	if (ss_meta_write_ts(SS_META_COUNTER, ts, &c, sizeof(c), NULL, 0))
		return;
	mem.last[slot] = v;
	mem.have_last[slot] = 1;
}

/* Lock held. */
static void put_counters(const struct ss_mem_sample *s)
{
	char name[48];
	if (s->host_ok) {
		put_counter(0, "host.rss", s->host.rss, s->ticks);
		put_counter(1, "host.rss_peak", s->host.hwm, s->ticks);
	}
	for (int i = 0; i < s->ndev; i++) {
		const struct ss_mem_dev *d = &s->dev[i];
		if (!d->ok)
			continue;
		snprintf(name, sizeof(name), "cuda:%d.used", d->index);
		put_counter(2 + 3 * i, name, d->used, s->ticks);
		snprintf(name, sizeof(name), "cuda:%d.total", d->index);
		put_counter(3 + 3 * i, name, d->total, s->ticks);
		if (d->matched) {
			snprintf(name, sizeof(name), "cuda:%d.process", d->index);
			put_counter(4 + 3 * i, name, d->proc, s->ticks);
		}
	}
}

/* ------------------------------------------------------------ memory_profile.json */

static int write_all(int fd, const struct iovec *iov, int n)
{
	for (int i = 0; i < n; i++) {
		const char *p = iov[i].iov_base;
		size_t left = iov[i].iov_len;
		while (left) {
			ssize_t w = write(fd, p, left);
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				return -1;
			p += w;
			left -= (size_t)w;
		}
	}
	return 0;
}

/* Put the finished temporary file in place.  The first time, claim a name
 * nobody else in the run directory has: memory_profile.json for the first
 * process, memory_profile.<pid>.json for the others (link() fails when the
 * name exists, so two processes never take the same one). */
static int json_place(const char *tmp)
{
	if (mem.json_path[0])
		return rename(tmp, mem.json_path);
	char cand[sizeof(mem.json_path)];
	for (int k = 0; k < 100; k++) {
		if (k == 0)
			snprintf(cand, sizeof(cand), "%s/memory_profile.json", ss_rt.dir);
		else if (k == 1)
			snprintf(cand, sizeof(cand), "%s/memory_profile.%d.json",
				 ss_rt.dir, (int)getpid());
		else /* an exec'd image of the same pid */
			snprintf(cand, sizeof(cand), "%s/memory_profile.%d.%d.json",
				 ss_rt.dir, (int)getpid(), k - 1);
		int claimed = 0;
		if (!link(tmp, cand)) {
			unlink(tmp);
			snprintf(mem.json_path, sizeof(mem.json_path), "%s", cand);
			return 0;
		}
		if (errno != EEXIST) {
			/* no hard links here: claim with O_EXCL, then rename */
			int fd = open(cand, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
					      O_CLOEXEC, 0600);
			if (fd < 0 && errno != EEXIST)
				return -1;
			if (fd >= 0) {
				close(fd);
				claimed = 1;
			}
		}
		if (claimed) {
			snprintf(mem.json_path, sizeof(mem.json_path), "%s", cand);
			return rename(tmp, mem.json_path);
		}
	}
	errno = EEXIST;
	return -1;
}

static void json_flush(void)
{
	char tmp[sizeof(ss_rt.dir) + 64];
	snprintf(tmp, sizeof(tmp), "%s/.memory_profile.%d.tmp", ss_rt.dir,
		 (int)getpid());
	/* a new file, owner-only: one left at the name (a planted symlink)
	 * goes first, it is never written through */
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 && errno == EEXIST && !unlink(tmp))
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	int ok = fd >= 0;
	if (ok) {
		struct iovec iov[3] = {
			{ "[\n", 2 },
			{ mem.json, mem.json_len },
			{ "\n]\n", 3 },
		};
		ok = !write_all(fd, iov, 3);
		ok = !close(fd) && ok;
		ok = ok && !json_place(tmp);
	}
	if (!ok) {
		int e = errno;
		unlink(tmp);
		if (!mem.said_json)
			ss_warn("memory: cannot write memory_profile.json in %s: %s; "
				"the trace still gets the samples", ss_rt.dir,
				strerror(e));
		mem.said_json = 1;
	}
}

static void json_add(int64_t step, const struct ss_mem_sample *s)
{
	char line[4096];
	size_t n = ss_memory_json_entry(line, sizeof(line), step, (int)getpid(), s);
	if (n >= sizeof(line))
		return; /* cannot happen with SS_MEM_MAX_DEV devices */
	size_t need = mem.json_len + n + 3;
	if (need > mem.json_cap) {
		size_t cap = mem.json_cap ? mem.json_cap * 2 : 64 * 1024;
		while (cap < need)
			cap *= 2;
		char *p = ss_realloc(mem.json, cap);
		if (!p)
			return;
		mem.json = p;
		mem.json_cap = cap;
	}
	if (mem.json_len) {
		memcpy(mem.json + mem.json_len, ",\n", 2);
		mem.json_len += 2;
	}
	memcpy(mem.json + mem.json_len, line, n);
	mem.json_len += n;
	mem.nentries++;
	json_flush();
}

/* ------------------------------------------------------------ the poller */

/* One wake-up.  `last`: the poller is stopping. */
static void tick(int last)
{
	uint64_t want = atomic_exchange(&mem.want_entry, 0);
	int64_t last_step = -1;
	pthread_mutex_lock(&ss_rt.lock);
	int can_write = ss_rt.fd >= 0 && ss_rt.pid == getpid();
	if (ss_rt.have_step)
		last_step = (int64_t)ss_rt.step;
	pthread_mutex_unlock(&ss_rt.lock);
	if (!mem.profiled && !can_write)
		return; /* nothing recorded here yet: not profiled (so far) */
	mem.profiled = 1;
	if (!mem.nvml_tried)
		nvml_start();
	struct ss_mem_sample s;
	take_sample(&s);
	pthread_mutex_lock(&ss_rt.lock);
	/* a size cap or full disk stopped recording: leave the room kept
	 * for names and the end marker to them */
	if (ss_rt.fd >= 0 && !ss_rt.stopped && !ss_rt.disabled)
		put_counters(&s);
	pthread_mutex_unlock(&ss_rt.lock);
	if (want)
		json_add((int64_t)want - 1, &s);
	if (last && !mem.nentries)
		json_add(last_step, &s); /* never an empty profile */
}

static void *poller_main(void *arg)
{
	uint64_t next = ss_clock_mono_ns() + mem.interval_ns;
	while (!atomic_load(&mem.stop)) {
		uint64_t now = ss_clock_mono_ns();
		int64_t wait_ms = now < next ? (int64_t)((next - now + 999999) / 1000000) : 0;
		if (!mem.profiled && wait_ms < SS_MEM_IDLE_MS)
			wait_ms = SS_MEM_IDLE_MS;
		struct pollfd p = { .fd = mem.efd, .events = POLLIN };
		int r = poll(&p, 1, (int)wait_ms);
		if (r > 0) {
			uint64_t v;
			ssize_t k = read(mem.efd, &v, sizeof(v));
			(void)k;
		}
		if (atomic_load(&mem.stop))
			break;
		tick(0);
		now = ss_clock_mono_ns();
		if (now >= next) {
			next += mem.interval_ns;
			if (next <= now)
				next = now + mem.interval_ns;
		}
	}
	tick(1);
	return NULL;
}

static void start_thread(void)
{
	/* the poller takes no signal meant for the program (SIGINT, SIGPROF,
	 * timers): it inherits a full mask; named here, not by the thread:
	 * it has its name once we return */
	int err = ss_thread_start(&mem.thread, poller_main, NULL, "stepscope-mem");
	if (err) {
		ss_warn("memory: cannot start the poller thread: %s; memory is "
			"sampled once at exit only", strerror(err));
		return;
	}
	mem.running = 1;
}

/* In a forked child only the forking thread exists: start our own poller,
 * with a fresh profile (the child has its own trace file too). */
static void after_fork_child(void)
{
	if (!mem.started)
		return;
	mem.running = 0;
	if (mem.efd >= 0)
		close(mem.efd);
	mem.efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	/* the parent's poller may have been anywhere: keep nothing it owned
	 * but the loaded library (NVML is started again: nvmlInit counts) */
	mem.profiled = mem.nvml_tried = mem.nvml_ready = 0;
	mem.nvml_inited = 0;
	mem.ndev = 0;
	memset(mem.dev_peak, 0, sizeof(mem.dev_peak));
	memset(mem.have_last, 0, sizeof(mem.have_last));
	mem.json = NULL; /* the parent's buffer is left alone, not freed */
	mem.json_len = mem.json_cap = 0;
	mem.nentries = 0;
	mem.json_path[0] = 0;
	atomic_store(&mem.want_entry, 0);
	atomic_store(&mem.skipped, 0);
	mem.restart = mem.efd >= 0 && !atomic_load(&mem.stop) && !atomic_load(&mem.stopped);
}

/* The child's first slow path (lock held): the poller, which the fork
 * child handler may not start (async-signal-safe only there). */
void ss_memory_after_fork(void)
{
	if (!mem.restart)
		return;
	mem.restart = 0;
	start_thread();
}

/* ------------------------------------------------------------ API */

void ss_memory_start(void)
{
	const struct ss_config *c = &ss_rt.cfg;
	if (mem.started || !c->memory_enabled)
		return;
	mem.interval_ns = (uint64_t)(c->memory_interval_ms > 0 ? c->memory_interval_ms : 10) * 1000000;
	mem.every_n = (uint64_t)(c->memory_every_n_steps > 0 ? c->memory_every_n_steps : 100);
	const char *lib = secure_getenv("STEPSCOPE_NVML_LIBRARY");
	if (lib && strlen(lib) < sizeof(mem_nvml_env))
		memcpy(mem_nvml_env, lib, strlen(lib) + 1);
	else if (lib)
		ss_warn("memory: STEPSCOPE_NVML_LIBRARY is longer than %zu bytes; "
			"ignored", sizeof(mem_nvml_env) - 1);
	mem.efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (mem.efd < 0) {
		ss_warn("memory: cannot create an eventfd: %s; memory not sampled",
			strerror(errno));
		return;
	}
	mem.started = 1;
	static int atfork_done;
	if (!atfork_done && !pthread_atfork(NULL, NULL, after_fork_child))
		atfork_done = 1;
	start_thread();
}

/* Training thread, ss_rt.lock held: record the request, wake the poller,
 * nothing else.  errno is left as it was. */
void ss_memory_on_step(uint64_t step)
{
	if (!mem.started || mem.efd < 0)
		return;
	int saved = errno;
	if (step > 0 && step % mem.every_n == 0 &&
	    atomic_exchange(&mem.want_entry, step + 1))
		atomic_fetch_add(&mem.skipped, 1);
	uint64_t one = 1;
	ssize_t r = write(mem.efd, &one, sizeof(one)); /* EAGAIN: awake anyway */
	(void)r;
	errno = saved;
}

/* atexit and the library destructor: stop the poller, which takes a last
 * sample; wait for it at most SS_MEM_STOP_WAIT_S seconds. */
void ss_memory_stop(void)
{
	if (!mem.started || atomic_exchange(&mem.stopped, 1))
		return;
	int saved = errno;
	atomic_store(&mem.stop, 1);
	uint64_t one = 1;
	ssize_t w = write(mem.efd, &one, sizeof(one));
	(void)w;
	if (mem.running) {
		struct timespec dl;
		clock_gettime(CLOCK_REALTIME, &dl);
		dl.tv_sec += SS_MEM_STOP_WAIT_S;
		int err = pthread_timedjoin_np(mem.thread, NULL, &dl);
		if (err) {
			ss_warn("memory: the poller did not stop within %d s; "
				"memory_profile.json may lack the last sample",
				SS_MEM_STOP_WAIT_S);
			errno = saved;
			return; /* it still owns its state: touch nothing */
		}
		mem.running = 0;
	} else {
		tick(1); /* no poller here (it could not start): sample now */
	}
	uint64_t lost = atomic_load(&mem.skipped);
	if (lost)
		ss_warn("memory: %llu memory_profile.json entries skipped: steps "
			"were shorter than one sample (raise memory.every_n_steps)",
			(unsigned long long)lost);
	errno = saved;
}
