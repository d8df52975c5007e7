/*
 * test-memory.c - the memory poller (runtime/memory.c): parsing
 * /proc/self/status and CUDA_VISIBLE_DEVICES, finding this pid in NVML's
 * process list, the memory_profile.json entry text, and the poller thread
 * itself, run for real against a fake NVML.
 *
 * Test binaries link the tool objects, not the runtime, so this file
 * includes memory.c and memory-parse.c and stands in for the few runtime
 * pieces they call: ss_rt (a run directory under /tmp, a trace fd that is
 * just /dev/null), ss_meta_write_ts (keeps the counter records in memory) and ss_warn
 * (keeps the lines).  NVML is replaced through memory.c's loader seam, so
 * the GPU paths run on a machine with no GPU.  No real GPU, driver or CUDA
 * context is ever touched.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include <cjson/cJSON.h>
#include <dirent.h>
#include <sys/wait.h>

#include "../../runtime/clock.c"  /* the clocks memory.c reads */
#include "../../runtime/memory-parse.c"
#include "../../runtime/memory.c"
#include "../../runtime/dl.c"    /* the dlopen memory.c loads NVML with */

/* ------------------------------------------------------------ stand-ins */

struct ss_hot ss_hot;
struct ss_runtime ss_rt = { .lock = PTHREAD_MUTEX_INITIALIZER, .fd = -1 };

#define MAX_REC 4096
static struct ss_meta_counter recs[MAX_REC];
static size_t nrecs;
static int other_meta;                 /* records of another type */

/* memory.c calls this with ss_rt.lock held */
int ss_meta_write_ts(uint16_t type, uint64_t ts, const void *a, size_t alen,
		     const void *b, size_t blen)
{
	if (type != SS_META_COUNTER || alen != sizeof(struct ss_meta_counter) || blen) {
		other_meta++;
		return 0;
	}
	if (nrecs < MAX_REC)
		memcpy(&recs[nrecs++], a, alen);
	return 0;
}

/* runtime/thread.c's: the poller starts through it, named */
int ss_thread_start(pthread_t *th, void *(*fn)(void *), void *arg, const char *name)
{
	int err = pthread_create(th, NULL, fn, arg);
	if (!err && name)
		pthread_setname_np(*th, name);
	return err;
}

static pthread_mutex_t warn_lock = PTHREAD_MUTEX_INITIALIZER;
static char warns[8192];

void ss_warn(const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&warn_lock);
	size_t n = strlen(warns);
	snprintf(warns + n, sizeof(warns) - n, "stepscope: %s\n", line);
	pthread_mutex_unlock(&warn_lock);
}

static size_t count_recs(const char *track)
{
	size_t n = 0;
	pthread_mutex_lock(&ss_rt.lock);
	for (size_t i = 0; i < nrecs; i++)
		n += !strcmp(recs[i].track, track);
	pthread_mutex_unlock(&ss_rt.lock);
	return n;
}

static uint64_t last_rec(const char *track)
{
	uint64_t v = 0;
	pthread_mutex_lock(&ss_rt.lock);
	for (size_t i = 0; i < nrecs; i++)
		if (!strcmp(recs[i].track, track))
			v = recs[i].value;
	pthread_mutex_unlock(&ss_rt.lock);
	return v;
}

static size_t count_lines(const char *text, const char *needle)
{
	size_t n = 0;
	pthread_mutex_lock(&warn_lock);
	for (const char *p = text; (p = strstr(p, needle)); p++)
		n++;
	pthread_mutex_unlock(&warn_lock);
	return n;
}

/* ------------------------------------------------------------ fake NVML */

#define FAKE_DEV 3
#define FOREIGN_PID 0x7ffffff0u  /* no such pid here: another namespace */

static struct {
	int init_rc;
	unsigned count;
	_Atomic unsigned long long used[FAKE_DEV], total[FAKE_DEV];
	_Atomic unsigned long long mine[FAKE_DEV];   /* this pid's bytes */
	int list_me[FAKE_DEV];      /* list this pid on the device */
	unsigned others[FAKE_DEV];  /* another pid listed there, 0 none */
	atomic_int calls;
} fake;

static ss_nvml_return fake_init(void)
{
	return fake.init_rc;
}

static ss_nvml_return fake_count(unsigned *n)
{
	*n = fake.count;
	return 0;
}

static ss_nvml_return fake_by_index(unsigned i, ss_nvml_device *h)
{
	if (i >= fake.count)
		return 2;
	*h = (ss_nvml_device)(uintptr_t)(i + 1);
	return 0;
}

static ss_nvml_return fake_by_uuid(const char *uuid, ss_nvml_device *h)
{
	if (strcmp(uuid, "GPU-fake-2"))
		return 2;
	*h = (ss_nvml_device)(uintptr_t)3;
	return 0;
}

static ss_nvml_return fake_meminfo(ss_nvml_device h, struct ss_nvml_memory *m)
{
	unsigned i = (unsigned)(uintptr_t)h - 1;
	atomic_fetch_add(&fake.calls, 1);
	m->used = fake.used[i];
	m->total = fake.total[i];
	m->free = m->total - m->used;
	return 0;
}

static ss_nvml_return fake_procs(ss_nvml_device h, unsigned *count, void *out)
{
	unsigned i = (unsigned)(uintptr_t)h - 1;
	struct ss_nvml_proc_v2 list[2];
	unsigned n = 0;
	memset(list, 0, sizeof(list));
	if (fake.others[i]) {
		list[n].pid = fake.others[i];
		list[n++].used_gpu_memory = 1 << 20;
	}
	if (fake.list_me[i]) {
		list[n].pid = (unsigned)getpid();
		list[n++].used_gpu_memory = fake.mine[i];
	}
	if (*count < n) {
		*count = n;
		return SS_NVML_ERROR_INSUFFICIENT_SIZE;
	}
	memcpy(out, list, n * sizeof(list[0]));
	*count = n;
	return 0;
}

static int fake_loader(struct ss_mem_nvml *n, char *why, size_t len)
{
	n->init = fake_init;
	n->count = fake_count;
	n->by_index = fake_by_index;
	n->by_uuid = fake_by_uuid;
	n->meminfo = fake_meminfo;
	n->procs = fake_procs;
	n->proc_stride = sizeof(struct ss_nvml_proc_v2);
	return 0;
}

/* ------------------------------------------------------------ fixtures */

static char rundir[256];

static void rm_rundir(void)
{
	DIR *d = opendir(rundir);
	if (!d)
		return;
	struct dirent *e;
	char p[600];
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(p, sizeof(p), "%s/%s", rundir, e->d_name);
		unlink(p);
	}
	closedir(d);
	rmdir(rundir);
}

/* A fresh poller state and run directory; `sets` are config overrides. */
static void setup_with(const char *const *sets)
{
	char err[512];
	free(mem.json);
	if (mem.efd >= 0)
		close(mem.efd);
	memset(&mem, 0, sizeof(mem));
	mem.efd = -1;
	mem_nvml_loader = NULL;
	mem_nvml_lib = SS_MEM_NVML_LIB;
	memset(&fake, 0, sizeof(fake));
	nrecs = 0;
	other_meta = 0;
	warns[0] = 0;
	ss_config_defaults(&ss_rt.cfg);
	for (; *sets; sets++)
		if (ss_config_set(&ss_rt.cfg, *sets, "--set", err, sizeof(err)))
			fail_msg("override '%s' refused: %s", *sets, err);
	snprintf(rundir, sizeof(rundir), "/tmp/ss-test-memory-XXXXXX");
	assert_non_null(mkdtemp(rundir));
	snprintf(ss_rt.dir, sizeof(ss_rt.dir), "%s", rundir);
	if (ss_rt.fd < 0)
		ss_rt.fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	ss_rt.pid = getpid();
	ss_rt.have_step = 0;
	ss_rt.step = 0;
	ss_rt.stopped = 0;
	ss_rt.disabled = 0;
}

static const char *const default_sets[] = { "memory.enabled=true",
					    "memory.interval_ms=5",
					    "memory.every_n_steps=2", NULL };

static int setup(void **state)
{
	setup_with(default_sets);
	return 0;
}

static int teardown(void **state)
{
	ss_memory_stop();
	rm_rundir();
	return 0;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };
	nanosleep(&ts, NULL);
}

/* Begin a step as window.c does: lock held, then on_step. */
static void begin_step(uint64_t step)
{
	pthread_mutex_lock(&ss_rt.lock);
	ss_rt.step = step;
	ss_rt.have_step = 1;
	ss_memory_on_step(step);
	pthread_mutex_unlock(&ss_rt.lock);
}

/* memory_profile.json of the run directory, parsed; fails on bad JSON */
static cJSON *load_profile(const char *name)
{
	char path[600];
	snprintf(path, sizeof(path), "%s/%s", rundir, name);
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return NULL;
	static char buf[1 << 20];
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	assert_true(n >= 0);
	buf[n] = 0;
	cJSON *j = cJSON_Parse(buf);
	if (!j || !cJSON_IsArray(j))
		fail_msg("%s is not a JSON array:\n%s", path, buf);
	return j;
}

/* Wait until the profile has `n` entries (the poller writes it); 10 s
 * at most, a bound only a stuck poller reaches, however busy the machine. */
static cJSON *wait_entries(int n)
{
	for (int i = 0; i < 2000; i++) {
		cJSON *j = load_profile("memory_profile.json");
		if (j && cJSON_GetArraySize(j) >= n)
			return j;
		cJSON_Delete(j);
		sleep_ms(5);
	}
	fail_msg("memory_profile.json never reached %d entries", n);
	return NULL;
}

static double num(const cJSON *o, const char *path)
{
	/* "a.b.c", with keys that may contain ':' */
	char buf[128];
	snprintf(buf, sizeof(buf), "%s", path);
	const cJSON *cur = o;
	for (char *k = strtok(buf, "."); k; k = strtok(NULL, ".")) {
		cur = cJSON_GetObjectItemCaseSensitive(cur, k);
		if (!cur)
			fail_msg("no '%s' in entry (looking for %s)", k, path);
	}
	if (!cJSON_IsNumber(cur))
		fail_msg("%s is not a number", path);
	return cur->valuedouble;
}

/* ------------------------------------------------------------ pure parts */

static void test_parse_status(void **state)
{
	struct ss_mem_host h = { 1, 1 };
	const char *text = "Name:\tx\nVmPeak:\t  999 kB\nVmHWM:\t    2048 kB\n"
			   "VmRSS:\t    1024 kB\nThreads:\t1\n";
	assert_int_equal(ss_memory_parse_status(text, &h), 0);
	assert_int_equal(h.rss, 1024 * 1024);
	assert_int_equal(h.hwm, 2048 * 1024);

	/* first line, no final newline */
	assert_int_equal(ss_memory_parse_status("VmRSS: 1 kB\nVmHWM: 3 kB", &h), 0);
	assert_int_equal(h.rss, 1024);
	assert_int_equal(h.hwm, 3072);

	/* missing or malformed: refused, *out untouched */
	h.rss = h.hwm = 7;
	assert_int_equal(ss_memory_parse_status("VmRSS:\t1 kB\n", &h), -1);
	assert_int_equal(ss_memory_parse_status("VmRSS:\tx kB\nVmHWM:\t1 kB\n", &h), -1);
	assert_int_equal(ss_memory_parse_status("VmRSS:\t1 MB\nVmHWM:\t1 kB\n", &h), -1);
	assert_int_equal(ss_memory_parse_status("XVmRSS:\t1 kB\nVmHWM:\t1 kB\n", &h), -1);
	assert_int_equal(ss_memory_parse_status("", &h), -1);
	assert_int_equal(h.rss, 7);
	assert_int_equal(h.hwm, 7);

	/* the real file of this process */
	assert_int_equal(read_host(&h), 0);
	assert_true(h.rss > 0);
	assert_true(h.hwm >= h.rss);
}

static void test_parse_visible(void **state)
{
	char ids[4][SS_MEM_ID_MAX];
	static const struct {
		const char *env;
		int n;
		const char *want[4];
	} cases[] = {
		{ "0,2", 2, { "0", "2" } },
		{ " 1 , GPU-abc-123 ", 2, { "1", "GPU-abc-123" } },
		{ "MIG-x,3", 2, { "MIG-x", "3" } },
		{ "", 0, { 0 } },
		{ "-1", 0, { 0 } },
		{ "0,-1,1", 1, { "0" } },
		{ "0,foo,1", 1, { "0" } },
		{ "0,,1", 1, { "0" } },
		{ "GPU-", 0, { 0 } },
		{ "0,1,2,3,4,5", 4, { "0", "1", "2", "3" } },
	};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		int n = ss_memory_parse_visible(cases[c].env, ids, 4);
		if (n != cases[c].n)
			fail_msg("CUDA_VISIBLE_DEVICES='%s': %d entries, want %d",
				 cases[c].env, n, cases[c].n);
		for (int i = 0; i < n; i++)
			assert_string_equal(ids[i], cases[c].want[i]);
	}
}

static void test_proc_used(void **state)
{
	struct ss_nvml_proc_v1 v1[3] = { { 10, 100 }, { 42, 5000 }, { 11, 7 } };
	struct ss_nvml_proc_v2 v2[4] = { { 10, 100, 0, 0 }, { 42, 1000, 1, 0 },
					 { 42, 2000, 2, 0 }, { 11, 7, 0, 0 } };
	uint64_t used = 0;

	assert_int_equal(ss_memory_proc_used(v1, sizeof(v1[0]), 3, 42, &used), 1);
	assert_int_equal(used, 5000);
	/* MIG: one record per instance, summed */
	assert_int_equal(ss_memory_proc_used(v2, sizeof(v2[0]), 4, 42, &used), 1);
	assert_int_equal(used, 3000);
	used = 9;
	assert_int_equal(ss_memory_proc_used(v2, sizeof(v2[0]), 4, 43, &used), -1);
	assert_int_equal(ss_memory_proc_used(v2, sizeof(v2[0]), 0, 42, &used), -1);
	assert_int_equal(used, 9);
	v1[1].used_gpu_memory = SS_NVML_VALUE_NOT_AVAILABLE;
	assert_int_equal(ss_memory_proc_used(v1, sizeof(v1[0]), 3, 42, &used), 0);
	assert_int_equal(used, 9);
}

static void test_json_entry(void **state)
{
	struct ss_mem_sample s;
	memset(&s, 0, sizeof(s));
	s.ts_ns = 1700000000123456789ull;
	s.host_ok = 1;
	s.host.rss = 4096;
	s.host.hwm = 8192;
	s.ndev = 3;
	s.dev[0] = (struct ss_mem_dev){ .index = 0, .ok = 1, .in_use = 100,
					.peak = 300, .total = 1000 };
	s.dev[1] = (struct ss_mem_dev){ .index = 1, .ok = 0 }; /* read failed */
	s.dev[2] = (struct ss_mem_dev){ .index = 2, .ok = 1, .in_use = 0,
					.peak = 0, .total = 80 };
	char buf[1024];
	size_t n = ss_memory_json_entry(buf, sizeof(buf), 100, 77, &s);
	const char *want =
		"{\"step\": 100, \"timestamp_ns\": 1700000000123456789, \"pid\": 77, "
		"\"memory\": {\"cuda:0\": {\"bytes_in_use\": 100, \"peak_bytes_in_use\": "
		"300, \"bytes_limit\": 1000}, \"cuda:2\": {\"bytes_in_use\": 0, "
		"\"peak_bytes_in_use\": 0, \"bytes_limit\": 80}, \"host\": "
		"{\"bytes_in_use\": 4096, \"peak_bytes_in_use\": 8192}}}";
	assert_string_equal(buf, want);
	assert_int_equal(n, strlen(want));

	/* host only, no step */
	s.ndev = 0;
	ss_memory_json_entry(buf, sizeof(buf), -1, 5, &s);
	assert_string_equal(buf, "{\"step\": -1, \"timestamp_ns\": 1700000000123456789, "
				 "\"pid\": 5, \"memory\": {\"host\": {\"bytes_in_use\": "
				 "4096, \"peak_bytes_in_use\": 8192}}}");

	/* too small a buffer: cut short, terminated, full length returned */
	char small[16];
	size_t need = ss_memory_json_entry(small, sizeof(small), -1, 5, &s);
	assert_int_equal(need, strlen(buf));
	assert_int_equal(strlen(small), sizeof(small) - 1);
	assert_memory_equal(small, buf, sizeof(small) - 1);
}

/* ------------------------------------------------------------ the poller */

static int poller_named(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int found = 0;
	while (d && (e = readdir(d))) {
		char p[300], name[32] = "";
		snprintf(p, sizeof(p), "/proc/self/task/%s/comm", e->d_name);
		int fd = open(p, O_RDONLY);
		if (fd < 0)
			continue;
		ssize_t n = read(fd, name, sizeof(name) - 1);
		close(fd);
		if (n > 0 && !strncmp(name, "stepscope-mem", 13))
			found++;
	}
	if (d)
		closedir(d);
	return found;
}

/* No libnvidia-ml: one info line, host memory only, entries every 2nd step. */
static void test_no_driver(void **state)
{
	mem_nvml_lib = "libstepscope-test-no-such-nvml.so.1";
	ss_memory_start();
	assert_int_equal(mem.running, 1);
	assert_int_equal(poller_named(), 1);
	/* each entry's step waits until the poller wrote it: a poller that a
	 * busy machine keeps off the CPU longer than a step would skip an
	 * entry, and steps slept 15 ms (issue 37) */
	for (uint64_t s = 0; s <= 6; s++) {
		begin_step(s);
		if (s && s % 2 == 0)
			cJSON_Delete(wait_entries((int)(s / 2)));
	}
	cJSON *j = wait_entries(3);
	ss_memory_stop();
	assert_int_equal(poller_named(), 0);
	assert_int_equal(mem.running, 0);

	assert_int_equal(count_lines(warns, "stepscope: memory: no NVIDIA driver "
				     "(libstepscope-test-no-such-nvml.so.1 not found); "
				     "polling host memory only\n"), 1);
	assert_int_equal(count_lines(warns, "stepscope: "), 1);
	cJSON_Delete(j);
	j = load_profile("memory_profile.json");
	assert_int_equal(cJSON_GetArraySize(j), 3);
	for (int i = 0; i < 3; i++) {
		cJSON *e = cJSON_GetArrayItem(j, i);
		assert_int_equal((int)num(e, "step"), 2 * (i + 1));
		assert_int_equal((int)num(e, "pid"), getpid());
		assert_true(num(e, "memory.host.bytes_in_use") > 0);
		assert_true(num(e, "memory.host.peak_bytes_in_use") >=
			    num(e, "memory.host.bytes_in_use"));
		assert_true(num(e, "timestamp_ns") > 1e18);
		assert_null(cJSON_GetObjectItem(cJSON_GetObjectItem(e, "memory"), "cuda:0"));
	}
	cJSON_Delete(j);
	assert_true(count_recs("host.rss") >= 1);
	assert_true(count_recs("host.rss_peak") >= 1);
	assert_int_equal(count_recs("cuda:0.used"), 0);
	assert_int_equal(other_meta, 0);
	/* no temporary file left behind */
	char tmp[600];
	snprintf(tmp, sizeof(tmp), "%s/.memory_profile.%d.tmp", rundir, (int)getpid());
	assert_int_equal(access(tmp, F_OK), -1);
}

/* Two GPUs through the fake NVML: this pid matched on cuda:0, absent from
 * cuda:1 (whose listed pid exists here, so it is someone else's memory). */
static void test_fake_gpus(void **state)
{
	mem_nvml_loader = fake_loader;
	fake.count = 2;
	fake.total[0] = 80ull << 30;
	fake.total[1] = 40ull << 30;
	fake.used[0] = 10ull << 30;
	fake.used[1] = 5ull << 30;
	fake.list_me[0] = 1;
	fake.others[0] = 1; /* init: always visible */
	fake.others[1] = 1;
	fake.mine[0] = 100ull << 20;
	ss_memory_start();
	begin_step(0);
	begin_step(1);
	begin_step(2);                   /* entry: 100 MiB */
	cJSON_Delete(wait_entries(1));
	fake.mine[0] = 300ull << 20;
	begin_step(3);
	begin_step(4);                   /* entry: 300 MiB */
	cJSON_Delete(wait_entries(2));
	fake.mine[0] = 50ull << 20;
	fake.used[0] = 11ull << 30;
	begin_step(5);
	begin_step(6);                   /* entry: 50 MiB, peak 300 MiB */
	cJSON *j = wait_entries(3);
	ss_memory_stop();
	cJSON_Delete(j);

	j = load_profile("memory_profile.json");
	assert_int_equal(cJSON_GetArraySize(j), 3);
	cJSON *e0 = cJSON_GetArrayItem(j, 0), *e2 = cJSON_GetArrayItem(j, 2);
	assert_int_equal((int)num(e0, "step"), 2);
	assert_true(num(e0, "memory.cuda:0.bytes_in_use") == (double)(100ull << 20));
	assert_true(num(e0, "memory.cuda:0.bytes_limit") == (double)(80ull << 30));
	assert_true(num(e0, "memory.cuda:1.bytes_in_use") == 0);
	assert_true(num(e0, "memory.cuda:1.bytes_limit") == (double)(40ull << 30));
	assert_int_equal((int)num(e2, "step"), 6);
	assert_true(num(e2, "memory.cuda:0.bytes_in_use") == (double)(50ull << 20));
	assert_true(num(e2, "memory.cuda:0.peak_bytes_in_use") == (double)(300ull << 20));
	assert_true(num(e2, "memory.host.bytes_in_use") > 0);
	cJSON_Delete(j);

	assert_string_equal(warns, "");
	assert_true(count_recs("cuda:0.process") >= 3);
	assert_int_equal(last_rec("cuda:0.process"), 50ull << 20);
	assert_int_equal(last_rec("cuda:0.used"), 11ull << 30);
	assert_int_equal(count_recs("cuda:0.total"), 1); /* written on change only */
	assert_int_equal(count_recs("cuda:1.used"), 1);
	assert_int_equal(count_recs("cuda:1.process"), 0);
}

/* This pid not listed and the listed pid not ours: a container; the
 * profile falls back to device-wide use and says so once. */
static void test_container_fallback(void **state)
{
	mem_nvml_loader = fake_loader;
	fake.count = 1;
	fake.total[0] = 16ull << 30;
	fake.used[0] = 3ull << 30;
	fake.others[0] = FOREIGN_PID;
	ss_memory_start();
	for (uint64_t s = 0; s <= 4; s++) {
		begin_step(s);
		if (s && s % 2 == 0) /* the poller takes each entry: none skipped */
			cJSON_Delete(wait_entries((int)(s / 2)));
	}
	cJSON *j = wait_entries(2);
	ss_memory_stop();
	cJSON_Delete(j);
	j = load_profile("memory_profile.json");
	cJSON *e = cJSON_GetArrayItem(j, cJSON_GetArraySize(j) - 1);
	assert_true(num(e, "memory.cuda:0.bytes_in_use") == (double)(3ull << 30));
	cJSON_Delete(j);
	if (count_lines(warns, "stepscope: ") != 1)
		fail_msg("want one info line, got:\n%s", warns);
	assert_int_equal(count_lines(warns, "is not in NVML's process list"), 1);
	assert_int_equal(count_lines(warns, "stepscope: "), 1);
	assert_int_equal(count_recs("cuda:0.process"), 0);
	assert_true(count_recs("cuda:0.used") >= 1);
}

/* CUDA_VISIBLE_DEVICES renumbers: "2" becomes cuda:0, a UUID cuda:1. */
static void test_visible_devices(void **state)
{
	mem_nvml_loader = fake_loader;
	fake.count = 3;
	for (int i = 0; i < 3; i++)
		fake.total[i] = (unsigned long long)(i + 1) << 30;
	setenv("CUDA_VISIBLE_DEVICES", "2,GPU-fake-2,9", 1);
	ss_memory_start();
	sleep_ms(30);
	ss_memory_stop();
	unsetenv("CUDA_VISIBLE_DEVICES");
	cJSON *j = load_profile("memory_profile.json");
	cJSON *e = cJSON_GetArrayItem(j, 0);
	assert_true(num(e, "memory.cuda:0.bytes_limit") == (double)(3ull << 30));
	assert_true(num(e, "memory.cuda:1.bytes_limit") == (double)(3ull << 30));
	assert_null(cJSON_GetObjectItem(cJSON_GetObjectItem(e, "memory"), "cuda:2"));
	cJSON_Delete(j);
}

/* nvmlInit fails (library there, no GPU): one info line, host only. */
static void test_nvml_init_fails(void **state)
{
	mem_nvml_loader = fake_loader;
	fake.init_rc = 9; /* NVML_ERROR_DRIVER_NOT_LOADED */
	ss_memory_start();
	begin_step(0);
	begin_step(1);
	begin_step(2);
	cJSON *j = wait_entries(1);
	ss_memory_stop();
	assert_int_equal(count_lines(warns, "stepscope: memory: NVML did not start "
				     "(nvmlInit_v2 error 9"), 1);
	assert_int_equal(count_lines(warns, "stepscope: "), 1);
	assert_null(cJSON_GetObjectItem(
		cJSON_GetObjectItem(cJSON_GetArrayItem(j, 0), "memory"), "cuda:0"));
	cJSON_Delete(j);
	assert_int_equal(atomic_load(&fake.calls), 0);
}

/* No step ever begins: one entry at exit, step -1. */
static void test_no_steps(void **state)
{
	mem_nvml_lib = "libstepscope-test-no-such-nvml.so.1";
	ss_memory_start();
	sleep_ms(20);
	ss_memory_stop();
	cJSON *j = load_profile("memory_profile.json");
	assert_int_equal(cJSON_GetArraySize(j), 1);
	assert_int_equal((int)num(cJSON_GetArrayItem(j, 0), "step"), -1);
	cJSON_Delete(j);
}

/* Fewer steps than every_n_steps: one entry at exit for the last step. */
static void test_short_run(void **state)
{
	static const char *const sets[] = { "memory.enabled=true",
					    "memory.every_n_steps=100", NULL };
	rm_rundir();
	setup_with(sets);
	mem_nvml_lib = "libstepscope-test-no-such-nvml.so.1";
	ss_memory_start();
	for (uint64_t s = 0; s < 5; s++)
		begin_step(s);
	ss_memory_stop();
	cJSON *j = load_profile("memory_profile.json");
	assert_int_equal(cJSON_GetArraySize(j), 1);
	assert_int_equal((int)num(cJSON_GetArrayItem(j, 0), "step"), 4);
	cJSON_Delete(j);
}

/* A process that never records (no trace file) writes nothing at all and
 * never loads NVML: launchers that only inherit the preload stay quiet. */
static void test_not_profiled(void **state)
{
	mem_nvml_loader = fake_loader;
	fake.count = 1;
	close(ss_rt.fd);
	ss_rt.fd = -1;
	ss_memory_start();
	begin_step(0);
	sleep_ms(20);
	ss_memory_stop();
	assert_null(load_profile("memory_profile.json"));
	assert_int_equal(nrecs, 0);
	assert_string_equal(warns, "");
	assert_int_equal(mem.nvml_tried, 0);
}

/* on_step never waits: with ss_rt.lock held (as in window.c) and the poller
 * stuck behind that lock, a burst of steps returns at once; entries the
 * poller could not take are counted and reported at the end. */
static void test_on_step_never_blocks(void **state)
{
	mem_nvml_lib = "libstepscope-test-no-such-nvml.so.1";
	ss_memory_start();
	begin_step(0);
	sleep_ms(20); /* poller is profiled and running */
	pthread_mutex_lock(&ss_rt.lock);
	uint64_t t0 = ss_clock_mono_ns();
	/* 20000 calls, a few ms idle: 2 s leaves a busy machine 100 times
	 * that, and still catches any wait of 0.1 ms a call */
	for (uint64_t s = 1; s <= 20000; s++) {
		ss_rt.step = s;
		ss_memory_on_step(s);
	}
	uint64_t dt = ss_clock_mono_ns() - t0;
	sleep_ms(20);
	pthread_mutex_unlock(&ss_rt.lock);
	ss_memory_stop();
	if (dt > 2000000000ull)
		fail_msg("20000 on_step calls took %llu ms with the lock held",
			 (unsigned long long)(dt / 1000000));
	assert_int_equal(count_lines(warns, "memory_profile.json entries skipped"), 1);
	assert_true(atomic_load(&mem.skipped) > 0);
}

/* ss_memory_stop twice (atexit, then the destructor): the second is a no-op */
static void test_stop_twice(void **state)
{
	mem_nvml_lib = "libstepscope-test-no-such-nvml.so.1";
	ss_memory_start();
	ss_memory_stop();
	ss_memory_stop();
	ss_memory_on_step(2); /* after stop: ignored, no crash */
	assert_int_equal(mem.running, 0);
	assert_int_equal(poller_named(), 0);
}

/* fork: the child has no poller of the parent's; its own one starts and
 * stops in bounded time, and the parent's profile stays the parent's. */
static void test_fork(void **state)
{
#ifdef __SANITIZE_THREAD__
	/* TSAN cannot start threads in the child of a threaded fork */
	print_message("test_fork: skipped under ThreadSanitizer\n");
	skip();
#endif
	mem_nvml_lib = "libstepscope-test-no-such-nvml.so.1";
	ss_memory_start();
	begin_step(0);
	begin_step(1);
	begin_step(2);
	cJSON *j = wait_entries(1);
	cJSON_Delete(j);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		ss_memory_after_fork(); /* the child's first slow path (ss_fork_resume) */
		int bad = (mem.running != 1) | (poller_named() != 1) << 1 |
			  (mem.json_path[0] != 0) << 2 | (mem.nentries != 0) << 3;
		ss_memory_stop();
		bad |= (poller_named() != 0) << 4;
		_exit(bad ? 100 + bad : 0);
	}
	int st = 0;
	for (int i = 0; i < 500 && waitpid(pid, &st, WNOHANG) == 0; i++)
		sleep_ms(10);
	if (waitpid(pid, &st, WNOHANG) == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		fail_msg("the forked child did not stop its poller within 5 s");
	}
	assert_true(WIFEXITED(st));
	if (WEXITSTATUS(st))
		fail_msg("child: poller state after fork wrong (exit %d)", WEXITSTATUS(st));
	begin_step(3);
	begin_step(4);
	j = wait_entries(2);
	ss_memory_stop();
	cJSON_Delete(j);
	j = load_profile("memory_profile.json");
	assert_int_equal((int)num(cJSON_GetArrayItem(j, 1), "pid"), getpid());
	cJSON_Delete(j);
}

/* Two processes in one run directory: the second gets its own file. */
static void test_second_process_own_file(void **state)
{
	char path[600];
	snprintf(path, sizeof(path), "%s/memory_profile.json", rundir);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "[]\n", 3), 3);
	close(fd);
	mem_nvml_lib = "libstepscope-test-no-such-nvml.so.1";
	ss_memory_start();
	ss_memory_stop();
	char own[64];
	snprintf(own, sizeof(own), "memory_profile.%d.json", (int)getpid());
	cJSON *j = load_profile(own);
	assert_non_null(j);
	assert_int_equal(cJSON_GetArraySize(j), 1);
	cJSON_Delete(j);
	j = load_profile("memory_profile.json");
	assert_int_equal(cJSON_GetArraySize(j), 0); /* left alone */
	cJSON_Delete(j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_status),
		cmocka_unit_test(test_parse_visible),
		cmocka_unit_test(test_proc_used),
		cmocka_unit_test(test_json_entry),
		cmocka_unit_test_setup_teardown(test_no_driver, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fake_gpus, setup, teardown),
		cmocka_unit_test_setup_teardown(test_container_fallback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_visible_devices, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nvml_init_fails, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_steps, setup, teardown),
		cmocka_unit_test_setup_teardown(test_short_run, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_profiled, setup, teardown),
		cmocka_unit_test_setup_teardown(test_on_step_never_blocks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stop_twice, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fork, setup, teardown),
		cmocka_unit_test_setup_teardown(test_second_process_own_file, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
