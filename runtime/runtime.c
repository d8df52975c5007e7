/*
 * runtime.c - start and end of libstepscope in a process: read the config
 * (refusing a bad one before main, exit 2), pick the clock, find the run
 * directory, prepare the file header, and at exit write thread names, a
 * last calibration point and the end-of-run marker.
 *
 * Only one copy of the runtime records in a process: a preloaded copy next
 * to a linked one, or a static copy, stays dormant (STEPSCOPE__OWNER names
 * the active copy by pid and address).  After fork the child gets its own
 * file; after exec the new image records into the same run directory.
 * Never: kill or block the program after main has started.
 *
 * The rule for the fork child handlers here and in the files they call
 * (buffer.c, ring.c, pool.c, thread.c, stats.c, memory.c, stack.c): only
 * async-signal-safe calls and plain stores, nothing allocated or freed
 * but mappings, no lock taken, nothing set in the environment.  Another
 * thread may have held any lock at the fork (glibc's environment lock,
 * a malloc arena): what needs more (threads) waits for ss_fork_resume.
 * Before main the same holds from a hook that starts the runtime early
 * (ss_runtime_early, from .preinit_array).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "alloc.h"
#include "envcode.h"
#include "internal.h"

struct ss_hot ss_hot = { .gate = SS_GATE_INIT };
struct ss_runtime ss_rt = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.fd = -1,
	.hold_fd = -1,
	.spare_fd = -1,
};
__thread struct ss_thread ss_tls __attribute__((tls_model("initial-exec")));

/* A run started without `record` whose config cannot be used (a bad
 * file, a step.function the program lacks, an unreadable
 * filter.exclude_file): one line, and the program runs unrecorded, as do
 * the processes it starts (STEPSCOPE_DISABLE, so they say nothing more).
 * A profiler never stops the program it was asked to watch; `record`
 * refuses the same input, exit 2, before the program starts.  A run
 * directory this process made for the run is removed (it holds nothing). */
void ss_rt_refuse(const char *what)
{
	ss_warn("%s; the program runs unrecorded", what);
	setenv("STEPSCOPE_DISABLE", "1", 1);
	if (ss_rt.own_dir)
		rmdir(ss_rt.dir);
	ss_hot.gate = 0; /* the hooks record nothing from here */
	ss_hot.watch = NULL;
	ss_rt.disabled = 1;
}

void ss_warn(const char *fmt, ...)
{
	char buf[512];
	int n = snprintf(buf, sizeof(buf), "stepscope: ");
	va_list ap;
	va_start(ap, fmt);
	n += vsnprintf(buf + n, sizeof(buf) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(buf) - 2)
		n = (int)sizeof(buf) - 2;
	buf[n++] = '\n';
	ssize_t r = write(STDERR_FILENO, buf, (size_t)n);
	(void)r;
}

static void read_file(const char *path, char *buf, size_t len, int nul_to_space)
{
	buf[0] = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = 0;
	if (nul_to_space)
		for (ssize_t i = 0; i < n - 1; i++)
			if (!buf[i])
				buf[i] = ' ';
}

static int exe_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	ss_meta_build_id(info, ss_rt.hdr.build_id, &ss_rt.hdr.build_id_len);
	return 1; /* the first module is the executable */
}

/* The parents of the run directory as `mkdir -p` makes them; the run
 * directory itself is made here, owner-only (0700), and must be new: a
 * name someone else made first (a planted symlink, a directory of a pid
 * that ran in the same second) gets the next suffix, "-2" to "-100". */
static int mkdir_parents(const char *path)
{
	char tmp[4096];
	snprintf(tmp, sizeof(tmp), "%s", path);
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(tmp, 0755) && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return 0;
}

static int mkdir_run(char *dir, size_t len)
{
	size_t n = strlen(dir);
	if (mkdir_parents(dir))
		return -1;
	for (int k = 1; k <= 100; k++) {
		if (k > 1 && snprintf(dir + n, len - n, "-%d", k) >= (int)(len - n)) {
			errno = ENAMETOOLONG;
			return -1;
		}
		if (!mkdir(dir, 0700))
			return 0;
		if (errno != EEXIST)
			return -1;
	}
	return -1;
}

/* STEPSCOPE_DIR from `stepscope record`, else a fresh directory of our own
 * under output_dir, shared with child processes through the environment. */
static int pick_dir(void)
{
	const char *env = secure_getenv("STEPSCOPE_DIR");
	if (env && *env) {
		snprintf(ss_rt.dir, sizeof(ss_rt.dir), "%s", env);
		return 0;
	}
	const char *slash = strrchr(ss_rt.hdr.exe_path, '/');
	const char *prog = slash ? slash + 1 : ss_rt.hdr.exe_path;
	time_t now = time(NULL);
	struct tm tm;
	localtime_r(&now, &tm);
	snprintf(ss_rt.dir, sizeof(ss_rt.dir), "%s/%s-%04d%02d%02d-%02d%02d%02d-%d",
		 ss_rt.cfg.output_dir, prog, tm.tm_year + 1900, tm.tm_mon + 1,
		 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)getpid());
	if (mkdir_run(ss_rt.dir, sizeof(ss_rt.dir))) {
		ss_warn("cannot create %s: %s; not recording", ss_rt.dir,
			strerror(errno));
		return -1;
	}
	char abs[PATH_MAX];
	if (realpath(ss_rt.dir, abs))
		snprintf(ss_rt.dir, sizeof(ss_rt.dir), "%s", abs);
	setenv("STEPSCOPE_DIR", ss_rt.dir, 1);
	ss_rt.own_dir = 1;
	return 0;
}

static void owner_mark(char *buf, size_t len);

/* The run's config as STEPSCOPE__CONFIG holds it: ss_config_dump's
 * "key=value" lines, applied on top of the defaults. */
static int load_handed(const char *handed, char *err, size_t errlen)
{
	static char buf[16384];
	if (strlen(handed) >= sizeof(buf)) {
		snprintf(err, errlen, "STEPSCOPE__CONFIG: too long");
		return -1;
	}
	strcpy(buf, handed);
	ss_envcode_get(buf); /* one line in the environment: envcode.h */
	const char *dump = buf;
	ss_config_defaults(&ss_rt.cfg);
	while (*dump) {
		const char *nl = strchr(dump, '\n');
		size_t n = nl ? (size_t)(nl - dump) : strlen(dump);
		char line[SS_CONFIG_PATH_MAX + 128];
		if (n >= sizeof(line)) {
			snprintf(err, errlen, "STEPSCOPE__CONFIG: line too long");
			return -1;
		}
		memcpy(line, dump, n);
		line[n] = 0;
		if (n && ss_config_set(&ss_rt.cfg, line, "STEPSCOPE__CONFIG", err, errlen))
			return -1;
		dump += n + (nl != NULL);
	}
	return ss_config_check(&ss_rt.cfg, err, errlen);
}

/* The first process of a run started without `record`: hand the config
 * it resolved to every process it starts, so they never read the file
 * (or pipe) again. */
static void hand_on(void)
{
	static char buf[16384], line[16384];
	size_t n = ss_config_dump(&ss_rt.cfg, buf, sizeof(buf));
	if (n < sizeof(buf) && ss_envcode_put(line, sizeof(line), buf, n) < sizeof(line))
		setenv("STEPSCOPE__CONFIG", line, 1);
}

static void after_fork_child(void)
{
	pthread_mutex_init(&ss_rt.lock, NULL);
	if (ss_rt.dormant || ss_rt.disabled)
		return;
	ss_rt.pid = getpid();
	ss_buf_after_fork();
	if (ss_rt.meta_base)
		munmap(ss_rt.meta_base, ((struct ss_chunk_header *)ss_rt.meta_base)->size);
	ss_rt.meta_base = ss_rt.meta_pos = ss_rt.meta_end = NULL;
	ss_rt.own_dir = 0;
	ss_rt.step_tid = 0;
	ss_tls.tid = 0;
	ss_tls.stack_lo = ss_tls.stack_hi = 0;
	ss_thread_after_fork();
	ss_ring_after_fork();
	ss_tls.inherit = ss_tls.depth != 0; /* replayed in the child's trace */
	ss_pool_after_fork();
	ss_alloc_after_fork();
	/* the owner mark names this image and this copy, which the child
	 * shares: nothing to set (setenv here would wait forever on glibc's
	 * environment lock when another thread held it at the fork) */
	ss_rt.fork_resume = 1; /* threads start again on a slow path */
}

/* In a forked child, on the first slow path that holds the lock: what
 * the fork child handlers may not do (start threads, allocate).  Lock
 * held. */
void ss_fork_resume(void)
{
	if (!ss_rt.fork_resume)
		return;
	ss_rt.fork_resume = 0;
	ss_memory_after_fork();
	ss_stats_after_fork_resume();
}

/* "image:copy": this exec'd image of the process (the kernel's AT_RANDOM
 * bytes differ after every exec; a forked child shares them with its
 * parent, and its copies of the runtime sit at the same addresses) and
 * this copy of the runtime in it. */
static void owner_mark(char *buf, size_t len)
{
	unsigned long long image = 0;
	const void *rnd = (const void *)getauxval(AT_RANDOM);
	if (rnd)
		memcpy(&image, rnd, sizeof(image));
	snprintf(buf, len, "%016llx:%p", image, (void *)&ss_rt);
}

/* Another copy of the runtime already records in this process image? */
static int other_copy_active(void)
{
	/* the hook the program's calls bind to must be in our module */
	void *hook = dlsym(RTLD_DEFAULT, "__cyg_profile_func_enter");
	Dl_info them, us;
	if (hook && dladdr(hook, &them) && dladdr((void *)&ss_rt, &us) &&
	    them.dli_fbase != us.dli_fbase)
		return 1;
	char owner[96];
	owner_mark(owner, sizeof(owner));
	const char *cur = secure_getenv("STEPSCOPE__OWNER");
	const char *copy = strrchr(owner, ':');
	if (cur && !strncmp(cur, owner, (size_t)(copy - owner + 1)) && strcmp(cur, owner))
		return 1; /* same image, another copy */
	return 0;
}

/* This copy records: say so to any other copy loaded later into this
 * image (a static copy in a dlopen'ed library).  Before main, or from a
 * library's constructor; never in a fork child or a signal path. */
static void owner_claim(void)
{
	char owner[96];
	owner_mark(owner, sizeof(owner));
	char *cur = secure_getenv("STEPSCOPE__OWNER");
	if (cur && !strcmp(cur, owner))
		return;
	/* `record` reserves room for the mark (64 '-'), and an earlier
	 * image's mark is as long as ours: written in place, no setenv,
	 * which would allocate with the program's malloc and take the
	 * environment's lock */
	size_t n = strlen(owner);
	if (cur && strlen(cur) >= n)
		memcpy(cur, owner, n + 1);
	else
		setenv("STEPSCOPE__OWNER", owner, 1);
}

static void runtime_start(void);

/* From .preinit_array libc has not set `environ` yet (its own initializer
 * runs later and sets it to the real one): until then the runtime reads
 * the process's initial environment from /proc/self/environ.  What it
 * sets meanwhile (the run directory of a run without `record`) is lost
 * for the program, not for the runtime. */
static void early_environ(void)
{
	extern char **environ;
	static char buf[256 * 1024];
	static char *vec[4096];
	if (environ)
		return;
	int fd = open("/proc/self/environ", O_RDONLY | O_CLOEXEC);
	size_t n = 0, k = 0;
	if (fd >= 0) {
		ssize_t r;
		while (n < sizeof(buf) - 1 &&
		       (r = read(fd, buf + n, sizeof(buf) - 1 - n)) > 0)
			n += (size_t)r;
		close(fd);
	}
	buf[n] = 0;
	for (size_t i = 0; i < n && k < sizeof(vec) / sizeof(vec[0]) - 1;) {
		size_t len = strlen(buf + i);
		if (len)
			vec[k++] = buf + i;
		i += len + 1;
	}
	vec[k] = NULL;
	environ = vec;
}

/* A set-user-ID, set-group-ID or file-capability program (the kernel
 * sets AT_SECURE, as it does for the loader that then ignores LD_PRELOAD):
 * whoever runs it picks its environment and working directory, not its
 * rights.  So the runtime reads no STEPSCOPE_* variable and no config
 * file (one found through them would be opened with the program's rights,
 * and its errors would show its bytes), creates nothing, records nothing,
 * and says so in this one line (docs/robustness.md, "Security"). */
static int secure_process(void)
{
	if (!getauxval(AT_SECURE))
		return 0;
	ss_rt.secure = 1;
	ss_rt.disabled = 1;
	ss_warn("not recording: a set-user-ID, set-group-ID or file-capability "
		"program (AT_SECURE); STEPSCOPE_* variables and config files ignored");
	return 1;
}

/* ... and, as the loader does with LD_PRELOAD there, the STEPSCOPE_*
 * variables leave the environment, so that a process it starts with its
 * rights (after setuid(0), say) does not take them either.  In place, as
 * unsetenv would, allocating nothing; once libc has set `environ` (from
 * the constructor: before it, environ is still NULL). */
static void secure_scrub(void)
{
	extern char **environ;
	char **w = environ;
	if (!environ)
		return;
	for (char **r = environ; *r; r++)
		if (strncmp(*r, "STEPSCOPE", 9))
			*w++ = *r;
	*w = NULL;
}

__attribute__((constructor(101))) static void ss_runtime_start(void)
{
	if (!ss_rt.initialized) {
		runtime_start();
		/* STEPSCOPE_DIR, STEPSCOPE__CONFIG are set now */
		if (ss_exec_capture && !ss_rt.secure)
			ss_exec_capture();
	}
	if (ss_rt.secure)
		secure_scrub();
}

/* A hook ran before the constructor above: start now, so the program's
 * very first instrumented call is recorded. */
void ss_runtime_early(void)
{
	ss_runtime_start();
	__atomic_fetch_and(&ss_hot.gate, ~SS_GATE_INIT, __ATOMIC_RELAXED);
}

static void runtime_start(void)
{
	ss_rt.initialized = 1;
	/* hooks that run from here on (the program's own malloc, say) see
	 * the runtime as it is: not recording yet */
	__atomic_fetch_and(&ss_hot.gate, ~SS_GATE_INIT, __ATOMIC_RELAXED);
	if (secure_process())
		return; /* before anything reads the environment */
	early_environ();
	ss_rt.pid = getpid();
	if (other_copy_active()) {
		ss_rt.dormant = 1;
		return;
	}
	const char *off = secure_getenv("STEPSCOPE_DISABLE");
	if (off && *off && strcmp(off, "0")) {
		ss_rt.disabled = 1;
		return;
	}
	char exe[4096];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[len > 0 ? len : 0] = 0;
	if (ss_rank_launcher(exe)) { /* rank.c */
		ss_rt.disabled = 1;
		return;
	}
	char err[1024];
	const char *handed = secure_getenv("STEPSCOPE__CONFIG");
	if (handed) {
		/* a process of a run: the config was read once, by `record` or
		 * the run's first process, and is never refused here */
		ss_rt.handed = 1;
		if (load_handed(handed, err, sizeof(err))) {
			ss_warn("%s; not recording this process", err);
			ss_rt.disabled = 1;
			return;
		}
	} else {
		if (ss_config_resolve(&ss_rt.cfg, NULL, NULL, 0, err, sizeof(err))) {
			ss_rt_refuse(err); /* never stop the program: it runs unrecorded */
			return;
		}
		hand_on();
		ss_direct_note_config(&ss_rt.cfg); /* for the exit line */
	}
	if (!ss_rt.cfg.enabled) {
		ss_rt.disabled = 1;
		return;
	}
	owner_claim();
	ss_direct_defaults(&ss_rt.cfg); /* no record, no config: a quick look */
	ss_rt.chunk_bytes = (uint64_t)(ss_rt.cfg.buffer_kb > 0 ? ss_rt.cfg.buffer_kb : 1024) * 1024;
	ss_rt.cap_bytes = (uint64_t)ss_rt.cfg.max_trace_mb << 20;

	struct ss_file_header *h = &ss_rt.hdr;
	memcpy(h->magic, SS_MAGIC, SS_MAGIC_LEN);
	h->version = SS_VERSION;
	h->min_read_version = SS_MIN_READ_VERSION;
	h->header_size = SS_HEADER_SIZE;
	gethostname(h->hostname, sizeof(h->hostname) - 1);
	ssize_t n = readlink("/proc/self/exe", h->exe_path, sizeof(h->exe_path) - 1);
	h->exe_path[n > 0 ? n : 0] = 0;
	read_file("/proc/self/cmdline", h->cmdline, sizeof(h->cmdline), 1);
	dl_iterate_phdr(exe_cb, NULL);
	ss_clock_init(h);
	ss_rt.start_ticks = ss_clock_now();

	if (pick_dir()) {
		ss_rt.disabled = 1;
		return;
	}
	if (pthread_key_create(&ss_rt.key, ss_thread_exit)) {
		ss_rt.disabled = 1;
		return;
	}
	pthread_atfork(NULL, NULL, after_fork_child);
	ss_buf_fd_reserve(); /* while the program has one thread: buffer.c */
	ss_ring_test_switches(); /* read before the program has threads */
	if (ss_window_init()) {
		ss_rt.disabled = 1;
		return;
	}
	if (ss_filter_init()) /* filter: names to addresses */
		return;
	ss_filter_calibrate();
	ss_args_init(); /* record.args: names to addresses */
	ss_stats_init(); /* stats: whole_run, log.every_n_steps */
	if (ss_rt.cfg.record_stack)
		ss_stack_init();
	if (ss_rt.cfg.memory_enabled)
		ss_memory_start();
	ss_alloc_init(); /* memory.allocations (alloc.c) */
	ss_rank_init(); /* mpirun, srun: rank N of the job */
	/* the background thread (pool.c), started now, not at the step
	 * boundary that prepares the first window (creating it cost that
	 * boundary 0.14-0.18 ms on the development VM); after the filter's
	 * calibration, which opens the gate for a moment: the thread would
	 * take it for a window and create the file before main */
	if (ss_hot.watch && ss_rt.cfg.mode != SS_SCHED_ALL && !ss_rt.stopped)
		ss_pool_start(ss_rt.chunk_bytes);
}

__attribute__((destructor(101))) static void ss_runtime_end(void)
{
	uint64_t end = ss_clock_now(); /* a recorded step cut by exit ends here */
	ss_memory_stop(); /* first: its last sample takes the lock */
	ss_gpu_stop();    /* its final flush takes the lock too */
	if (!ss_rt.initialized || ss_rt.dormant || ss_rt.disabled)
		return;
	struct ss_thread *self = &ss_tls;
	/* exit() inside instrumented frames: they never return */
	if (ss_rt.fd >= 0 && self->ring)
		ss_frames_unwind_all(self, SS_UNWIND_EXIT);
	/* every finished block into the file's EVENTS chunks (ring.c) */
	if (ss_rt.fd >= 0)
		ss_ring_flush(self);
	self->in_slow = 1;
	pthread_mutex_lock(&ss_rt.lock);
	if (ss_rt.fd >= 0) {
		ss_stats_close_frames(self); /* stats: whole_run: last tables */
		ss_stats_write_all();
		ss_sched_stop(); /* record.sched: the last switches */
		for (struct ss_thread *t = ss_rt.threads; t; t = t->next)
			ss_meta_thread_name(t->tid);
		/* unused chunks at the end of the file go, in whatever order
		 * the pool and the rings reserved them */
		for (int pass = 0; pass < 4; pass++) {
			uint64_t before = ss_rt.file_off;
			ss_pool_trim();
			ss_ring_trim_tail(self, 0);
			if (ss_rt.file_off == before)
				break;
		}
		ss_ring_trim_tail(self, 1); /* the rest of each chunk: holes */
		ss_meta_calib();
		ss_alloc_write_live(); /* memory.allocations: blocks never freed */
		ss_cost_on_exit(end); /* what recording cost (SS_META_COST) */
		struct ss_meta_end e = {
			.events = atomic_load(&ss_rt.events),
			.lost = atomic_load(&ss_rt.lost),
			.last_step = ss_rt.have_step ? ss_rt.step : UINT64_MAX,
			.exit_status = -1,
		};
		ss_meta_write(SS_META_END, &e, sizeof(e), NULL, 0);
		if (ss_rt.own_dir)
			ss_direct_say_exit();
	}
	pthread_mutex_unlock(&ss_rt.lock);
	self->in_slow = 0;
}
