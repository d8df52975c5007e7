/*
 * e2e.c - the end-to-end test harness behind e2e.h.
 *
 * Commands run in a child (fork + exec of /bin/sh -c, under coreutils'
 * `timeout` so a hung tool cannot hang the suite) with cwd in the test's temp
 * dir and output in files there.  trace.json is parsed with cJSON; slices are
 * copied into a flat array so queries are plain loops.  Nesting is checked per
 * thread with a stack over slices sorted by (ts, -dur, file order).
 *
 * It must never delete anything outside the temp dir it created, and never
 * hide a failure: whatever goes wrong is printed before the test fails.
 */
#include "e2e.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#ifndef SS_SOURCE_DIR
#error "SS_SOURCE_DIR must name the source tree"
#endif
#ifndef SS_BUILD_DIR
#error "SS_BUILD_DIR must name the build dir"
#endif

const struct ss_e2e_variant ss_e2e_gcc_O0 = {"gcc", "-O0"};
const struct ss_e2e_variant ss_e2e_gcc_O2 = {"gcc", "-O2"};
const struct ss_e2e_variant ss_e2e_clang_O0 = {"clang", "-O0"};
const struct ss_e2e_variant ss_e2e_clang_O2 = {"clang", "-O2"};

/* ------------------------------------------------------------ small utils */

static char *xstrdup(const char *s)
{
	char *p = strdup(s ? s : "");
	if (!p)
		abort();
	return p;
}

static char *vfmt(const char *fmt, va_list ap)
{
	char *s = NULL;
	if (vasprintf(&s, fmt, ap) < 0)
		abort();
	return s;
}

/* Whole file, NUL-terminated; NULL (errno set) if it cannot be read. */
static char *slurp(const char *path, size_t *lenp)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);
	if (!buf)
		abort();
	for (;;) {
		if (len + 1 >= cap) {
			cap *= 2;
			buf = realloc(buf, cap);
			if (!buf)
				abort();
		}
		size_t n = fread(buf + len, 1, cap - len - 1, f);
		len += n;
		if (n == 0)
			break;
	}
	int bad = ferror(f);
	fclose(f);
	if (bad) {
		free(buf);
		errno = EIO;
		return NULL;
	}
	buf[len] = '\0';
	if (lenp)
		*lenp = len;
	return buf;
}

static int have_program(const char *prog)
{
	char *cmd = NULL;
	if (asprintf(&cmd, "command -v %s >/dev/null 2>&1", prog) < 0)
		abort();
	int rc = system(cmd);
	free(cmd);
	return rc == 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag,
		    struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	if (remove(path) != 0)
		fprintf(stderr, "e2e: cannot remove %s: %s\n", path,
			strerror(errno));
	return 0;
}

/* ------------------------------------------------------------ lifecycle */

int ss_e2e_setup(void **state)
{
	const struct ss_e2e_variant *v = *state;
	if (!v)
		v = &ss_e2e_gcc_O0;
	struct ss_e2e *t = calloc(1, sizeof(*t));
	if (!t)
		abort();
	t->v = v;

	/* Hermetic: the user's own config must not change what we record. */
	unsetenv("STEPSCOPE_CONFIG");
	unsetenv("STEPSCOPE_SET");
	setenv("SS_E2E_SRC", SS_SOURCE_DIR, 1);
	setenv("SS_E2E_BUILD", SS_BUILD_DIR, 1);
	/* Under ASAN=1 the tools carry UBSan too: undefined behaviour in them
	 * must fail the command, not scroll by in output nobody reads. */
	setenv("UBSAN_OPTIONS", "halt_on_error=1:print_stacktrace=1", 0);

	const char *tmp = getenv("TMPDIR");
	if (!tmp || !*tmp)
		tmp = "/tmp";
	snprintf(t->dir, sizeof(t->dir), "%s/ss-e2e-%s%s-XXXXXX", tmp, v->cc,
		 v->opt);
	if (!mkdtemp(t->dir)) {
		print_error("e2e: cannot create temp dir %s: %s\n", t->dir,
			    strerror(errno));
		free(t);
		return -1;
	}
	*state = t;
	return 0;
}

int ss_e2e_teardown(void **state)
{
	struct ss_e2e *t = *state;
	if (!t)
		return 0;
	for (int i = 0; i < t->ntraces; i++) {
		ss_e2e_trace_release(t->traces[i]);
		free(t->traces[i]);
	}
	free(t->cmd);
	free(t->out);
	free(t->err);
	if (t->passed)
		nftw(t->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	else
		print_message("e2e: kept %s for inspection\n", t->dir);
	free(t);
	*state = NULL;
	return 0;
}

struct ss_e2e *ss_e2e_begin(void **state)
{
	struct ss_e2e *t = *state;
	if (!have_program(t->v->cc)) {
		t->passed = 1; /* nothing to keep */
		fail_msg("e2e: compiler '%s' is not installed (Debian package %s; "
			 "`make test` installs it)", t->v->cc, t->v->cc);
	}
	return t;
}

void ss_e2e_need(struct ss_e2e *t, const char *check, const char *what,
		 const char *pkg)
{
	if (ss_e2e_sh(t, "%s", check) != 0) {
		t->passed = 1; /* nothing to keep */
		fail_msg("e2e: %s is not installed (Debian package %s; "
			 "`make test` installs it)", what, pkg);
	}
}

void ss_e2e_skip(struct ss_e2e *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *why = vfmt(fmt, ap);
	va_end(ap);
	print_message("e2e: skipped: %s\n", why);
	free(why);
	t->passed = 1; /* nothing to keep */
	skip();
	abort(); /* skip() does not return */
}

void ss_e2e_pass(struct ss_e2e *t)
{
	t->passed = 1;
}

void ss_e2e_filter_from_env(void)
{
	const char *f = getenv("SS_TEST_CASE");
	if (f && *f)
		cmocka_set_test_filter(f);
}

/* ------------------------------------------------------------ commands */

int ss_e2e_sh(struct ss_e2e *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *cmd = vfmt(fmt, ap);
	va_end(ap);

	free(t->cmd);
	free(t->out);
	free(t->err);
	t->cmd = cmd;
	t->out = t->err = NULL;

	int n = t->ncmd++;
	char outp[4200], errp[4200];
	snprintf(outp, sizeof(outp), "%s/cmd-%d.out", t->dir, n);
	snprintf(errp, sizeof(errp), "%s/cmd-%d.err", t->dir, n);

	const char *secs = getenv("SS_E2E_TIMEOUT");
	if (!secs || !*secs)
		secs = "120";
	int use_timeout = have_program("timeout");

	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		t->out = xstrdup("");
		t->err = xstrdup(strerror(errno));
		return -1;
	}
	if (pid == 0) {
		int in = open("/dev/null", O_RDONLY);
		int out = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int err = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (in < 0 || out < 0 || err < 0 || chdir(t->dir) != 0)
			_exit(126);
		dup2(in, 0);
		dup2(out, 1);
		dup2(err, 2);
		if (use_timeout)
			execlp("timeout", "timeout", "-k", "5", secs, "/bin/sh",
			       "-c", cmd, (char *)NULL);
		else
			execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	t->out = slurp(outp, NULL);
	t->err = slurp(errp, NULL);
	if (!t->out)
		t->out = xstrdup("");
	if (!t->err)
		t->err = xstrdup("");
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return -1;
}

static void show_text(const char *what, const char *text)
{
	if (!text || !*text) {
		print_message("  %s: (empty)\n", what);
		return;
	}
	size_t len = strlen(text);
	/* Long outputs: the end is where the error is. */
	const size_t max = 6000;
	const char *p = len > max ? text + len - max : text;
	print_message("  %s:%s\n%s%s", what, len > max ? " (last part)" : "",
		      p, text[len - 1] == '\n' ? "" : "\n");
}

void ss_e2e_show_last(struct ss_e2e *t, int status)
{
	print_message("  command: %s\n  cwd: %s\n",
		      t->cmd ? t->cmd : "(none)", t->dir);
	if (status >= 0)
		print_message("  status: %d%s\n", status,
			      status == 124 ? " (timed out, see SS_E2E_TIMEOUT)"
					    : "");
	show_text("stdout", t->out);
	show_text("stderr", t->err);
}

void ss_e2e__fail(struct ss_e2e *t, const char *file, int line,
		  const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = vfmt(fmt, ap);
	va_end(ap);
	print_error("%s:%d: %s%s", file, line, msg,
		    msg[0] && msg[strlen(msg) - 1] == '\n' ? "" : "\n");
	free(msg);
	if (t)
		print_message("  (variant %s %s, dir %s)\n", t->v->cc, t->v->opt,
			      t->dir);
	_fail(file, line);
	abort(); /* _fail does not return inside a cmocka test */
}

void ss_e2e__sh_ok(struct ss_e2e *t, const char *file, int line,
		   const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *cmd = vfmt(fmt, ap);
	va_end(ap);
	int st = ss_e2e_sh(t, "%s", cmd);
	free(cmd);
	if (st != 0) {
		ss_e2e_show_last(t, st);
		ss_e2e__fail(t, file, line, "command failed: expected status 0, "
			     "got %d", st);
	}
}

void ss_e2e_build(struct ss_e2e *t, const char *name, const char *extra)
{
	int st = ss_e2e_sh(t,
			   "\"$SS_E2E_BUILD/bin/stepscope-cc\" %s %s -pthread "
			   "-o s-%s \"$SS_E2E_SRC/tests/e2e/s-%s.c\" %s",
			   t->v->cc, t->v->opt, name, name, extra ? extra : "");
	if (st != 0) {
		ss_e2e_show_last(t, st);
		SS_E2E_FAIL(t, "building fixture s-%s failed (status %d)", name,
			    st);
	}
}

int ss_e2e_record(struct ss_e2e *t, const char *rundir, const char *name,
		  const char *args)
{
	return ss_e2e_sh(t,
			 "\"$SS_E2E_BUILD/bin/stepscope\" record -o %s -- "
			 "./s-%s %s",
			 rundir, name, args ? args : "");
}

void ss_e2e_symbolize(struct ss_e2e *t, const char *rundir)
{
	/* --details: the tests check args.file and args.addr */
	int st = ss_e2e_sh(t, "\"$SS_E2E_BUILD/bin/stepscope\" symbolize --details %s",
			   rundir);
	if (st != 0) {
		ss_e2e_show_last(t, st);
		SS_E2E_FAIL(t, "stepscope symbolize %s: expected status 0, got %d",
			    rundir, st);
	}
}

struct ss_e2e_trace *ss_e2e_symbolize_load(struct ss_e2e *t,
					   const char *rundir)
{
	ss_e2e_symbolize(t, rundir);
	if (t->ntraces == (int)(sizeof(t->traces) / sizeof(t->traces[0])))
		SS_E2E_FAIL(t, "e2e: too many traces in one test");
	struct ss_e2e_trace *tr = calloc(1, sizeof(*tr));
	if (!tr)
		abort();
	t->traces[t->ntraces++] = tr;
	char path[4200], err[512];
	snprintf(path, sizeof(path), "%s/%s/trace.json", t->dir, rundir);
	if (ss_e2e_trace_load(tr, path, err, sizeof(err)) != 0)
		SS_E2E_FAIL(t, "loading trace: %s", err);
	return tr;
}

struct ss_e2e_trace *ss_e2e_profile(struct ss_e2e *t, const char *name,
				    const char *extra, const char *args)
{
	ss_e2e_build(t, name, extra);
	int st = ss_e2e_record(t, "rec", name, args);
	if (st != 0) {
		ss_e2e_show_last(t, st);
		SS_E2E_FAIL(t, "stepscope record of s-%s: expected status 0, "
			    "got %d", name, st);
	}
	/* Keep the program's output: tests read what the fixture printed. */
	char *out = t->out;
	t->out = NULL;
	struct ss_e2e_trace *tr = ss_e2e_symbolize_load(t, "rec");
	free(t->out);
	t->out = out;
	return tr;
}

/* ------------------------------------------------------------ trace load */

static int set_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* Every "ts": in the text must be a number with exactly 3 decimals. */
static int check_ts_text(const char *text, char *err, size_t errlen)
{
	const char *p = text;
	while ((p = strstr(p, "\"ts\"")) != NULL) {
		const char *q = p + 4;
		while (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r')
			q++;
		if (*q != ':') {
			p += 4;
			continue;
		}
		q++;
		while (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r')
			q++;
		const char *num = q;
		if (*q == '-')
			q++;
		int ok = *q >= '0' && *q <= '9';
		while (*q >= '0' && *q <= '9')
			q++;
		if (ok && *q == '.') {
			q++;
			int d = 0;
			while (q[d] >= '0' && q[d] <= '9')
				d++;
			ok = d == 3;
			q += d;
		} else {
			ok = 0;
		}
		if (!ok) {
			int len = 0;
			while (num[len] && num[len] != ',' && num[len] != '}' &&
			       len < 40)
				len++;
			return set_err(err, errlen,
				       "\"ts\":%.*s is not microseconds with "
				       "exactly 3 decimals",
				       len, num);
		}
		p = q;
	}
	return 0;
}

static const char *jstr(const cJSON *obj, const char *key)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
	return cJSON_IsString(it) ? it->valuestring : NULL;
}

static int jnum(const cJSON *obj, const char *key, double *out)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
	if (!cJSON_IsNumber(it))
		return -1;
	*out = it->valuedouble;
	return 0;
}

static unsigned cat_bit(const char *cat)
{
	if (!strcmp(cat, "function"))
		return SS_E2E_CAT_FUNCTION;
	if (!strcmp(cat, "user_range"))
		return SS_E2E_CAT_USER_RANGE;
	if (!strcmp(cat, "step"))
		return SS_E2E_CAT_STEP;
	return SS_E2E_CAT_OTHER;
}

static void add_meta(struct ss_e2e_meta **arr, size_t *n, int64_t pid,
		     int64_t tid, const char *name)
{
	*arr = realloc(*arr, (*n + 1) * sizeof(**arr));
	if (!*arr)
		abort();
	(*arr)[*n].pid = pid;
	(*arr)[*n].tid = tid;
	(*arr)[*n].name = xstrdup(name);
	(*n)++;
}

static int load_event(struct ss_e2e_trace *tr, const cJSON *ev, size_t i,
		      size_t *cap, char *err, size_t errlen)
{
	if (!cJSON_IsObject(ev))
		return set_err(err, errlen, "traceEvents[%zu] is not an object",
			       i);
	const char *ph = jstr(ev, "ph");
	if (!ph)
		return set_err(err, errlen, "traceEvents[%zu] has no \"ph\"", i);
	double pid = 0, tid = 0;
	if (!strcmp(ph, "M")) {
		const char *name = jstr(ev, "name");
		const cJSON *args = cJSON_GetObjectItemCaseSensitive(ev, "args");
		const char *val = args ? jstr(args, "name") : NULL;
		if (!name || !val || jnum(ev, "pid", &pid))
			return set_err(err, errlen,
				       "traceEvents[%zu]: metadata event needs "
				       "name, pid and args.name",
				       i);
		if (!strcmp(name, "thread_name")) {
			if (jnum(ev, "tid", &tid))
				return set_err(err, errlen,
					       "traceEvents[%zu]: thread_name "
					       "without tid",
					       i);
			add_meta(&tr->threads, &tr->nthreads, (int64_t)pid,
				 (int64_t)tid, val);
		} else if (!strcmp(name, "process_name")) {
			add_meta(&tr->processes, &tr->nprocesses, (int64_t)pid,
				 0, val);
		}
		return 0;
	}
	if (strcmp(ph, "X") != 0)
		return 0; /* counters, instants: not modelled */

	const char *name = jstr(ev, "name"), *cat = jstr(ev, "cat");
	double ts, dur;
	if (!cat)
		cat = "function";  /* the exporter leaves it out on functions */
	if (!name || jnum(ev, "pid", &pid) || jnum(ev, "tid", &tid) ||
	    jnum(ev, "ts", &ts) || jnum(ev, "dur", &dur))
		return set_err(err, errlen,
			       "traceEvents[%zu]: complete event needs string "
			       "name and numeric pid, tid, ts, dur",
			       i);
	if (dur < 0)
		return set_err(err, errlen,
			       "traceEvents[%zu] (%s): negative dur %.3f", i,
			       name, dur);
	if (tr->nslices == *cap) {
		*cap = *cap ? *cap * 2 : 256;
		tr->slices = realloc(tr->slices, *cap * sizeof(*tr->slices));
		if (!tr->slices)
			abort();
	}
	struct ss_e2e_slice *s = &tr->slices[tr->nslices];
	memset(s, 0, sizeof(*s));
	s->name = xstrdup(name);
	s->cat = xstrdup(cat);
	s->catbit = cat_bit(cat);
	s->pid = (int64_t)pid;
	s->tid = (int64_t)tid;
	s->ts_ns = llround(ts * 1000.0);
	s->dur_ns = llround(dur * 1000.0);
	s->index = tr->nslices;
	s->parent = -1;
	const cJSON *args = cJSON_GetObjectItemCaseSensitive(ev, "args");
	if (cJSON_IsObject(args)) {
		const char *f = jstr(args, "file"), *a = jstr(args, "addr");
		s->file = f ? xstrdup(f) : NULL;
		s->addr = a ? xstrdup(a) : NULL;
		const char *clip = jstr(args, "clipped");
		if (clip && (!strcmp(clip, "begin") || !strcmp(clip, "both")))
			s->flags |= SS_E2E_CLIPPED_BEGIN;
		if (clip && (!strcmp(clip, "end") || !strcmp(clip, "both")))
			s->flags |= SS_E2E_CLIPPED_END;
		/* "longjmp", "thread_exit", "exit"; true from older tools */
		const cJSON *uw = cJSON_GetObjectItemCaseSensitive(args, "unwound");
		if (cJSON_IsTrue(uw) || cJSON_IsString(uw))
			s->flags |= SS_E2E_UNWOUND;
	}
	tr->nslices++;
	return 0;
}

int ss_e2e_trace_load(struct ss_e2e_trace *tr, const char *path, char *err,
		      size_t errlen)
{
	memset(tr, 0, sizeof(*tr));
	snprintf(tr->path, sizeof(tr->path), "%s", path);
	size_t len = 0;
	char *text = slurp(path, &len);
	if (!text)
		return set_err(err, errlen, "%s: %s", path, strerror(errno));
	int rc = -1;
	char why[400] = "";
	cJSON *root = cJSON_ParseWithLengthOpts(text, len + 1, NULL, 1);
	if (!root) {
		const char *at = cJSON_GetErrorPtr();
		set_err(why, sizeof(why), "not valid JSON (near byte %ld)",
			at ? (long)(at - text) : -1L);
		goto out;
	}
	if (!cJSON_IsObject(root)) {
		set_err(why, sizeof(why), "top level is not an object");
		goto out;
	}
	const char *unit = jstr(root, "displayTimeUnit");
	const cJSON *events = cJSON_GetObjectItemCaseSensitive(root,
								"traceEvents");
	const cJSON *other = cJSON_GetObjectItemCaseSensitive(root,
							       "otherData");
	if (!unit || strcmp(unit, "ns") != 0) {
		set_err(why, sizeof(why),
			"\"displayTimeUnit\" is %s%s%s, expected \"ns\"",
			unit ? "\"" : "", unit ? unit : "missing",
			unit ? "\"" : "");
		goto out;
	}
	if (!cJSON_IsArray(events)) {
		set_err(why, sizeof(why), "\"traceEvents\" is not an array");
		goto out;
	}
	if (!cJSON_IsObject(other)) {
		set_err(why, sizeof(why), "\"otherData\" is not an object");
		goto out;
	}
	for (const cJSON *k = root->child; k; k = k->next) {
		if (strcmp(k->string, "displayTimeUnit") &&
		    strcmp(k->string, "traceEvents") &&
		    strcmp(k->string, "stackFrames") &&
		    strcmp(k->string, "otherData")) {
			set_err(why, sizeof(why),
				"unexpected top-level key \"%s\"", k->string);
			goto out;
		}
	}
	if (check_ts_text(text, why, sizeof(why)) != 0)
		goto out;
	size_t cap = 0, i = 0;
	for (const cJSON *ev = events->child; ev; ev = ev->next, i++)
		if (load_event(tr, ev, i, &cap, why, sizeof(why)) != 0)
			goto out;
	char nerr[sizeof(tr->nest_err)];
	if (ss_e2e_check_nesting(tr, SS_E2E_CAT_FUNCTION | SS_E2E_CAT_USER_RANGE,
				 nerr, sizeof(nerr)) != 0)
		snprintf(tr->nest_err, sizeof(tr->nest_err), "%s", nerr);
	rc = 0;
out:
	if (rc != 0)
		set_err(err, errlen, "%s: %s", path, why);
	cJSON_Delete(root);
	free(text);
	return rc;
}

void ss_e2e_trace_release(struct ss_e2e_trace *tr)
{
	for (size_t i = 0; i < tr->nslices; i++) {
		free(tr->slices[i].name);
		free(tr->slices[i].cat);
		free(tr->slices[i].file);
		free(tr->slices[i].addr);
	}
	for (size_t i = 0; i < tr->nthreads; i++)
		free(tr->threads[i].name);
	for (size_t i = 0; i < tr->nprocesses; i++)
		free(tr->processes[i].name);
	free(tr->slices);
	free(tr->threads);
	free(tr->processes);
	memset(tr, 0, sizeof(*tr));
}

/* ------------------------------------------------------------ queries */

size_t ss_e2e_count(const struct ss_e2e_trace *tr, const char *name,
		    const char *cat, int64_t tid)
{
	size_t n = 0;
	for (size_t i = 0; i < tr->nslices; i++) {
		const struct ss_e2e_slice *s = &tr->slices[i];
		if ((!name || !strcmp(s->name, name)) &&
		    (!cat || !strcmp(s->cat, cat)) && (!tid || s->tid == tid))
			n++;
	}
	return n;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

size_t ss_e2e_tids(const struct ss_e2e_trace *tr, int64_t *out, size_t max)
{
	size_t n = 0;
	int64_t *all = malloc((tr->nslices + 1) * sizeof(*all));
	if (!all)
		abort();
	for (size_t i = 0; i < tr->nslices; i++)
		all[i] = tr->slices[i].tid;
	qsort(all, tr->nslices, sizeof(*all), cmp_i64);
	for (size_t i = 0; i < tr->nslices; i++) {
		if (i > 0 && all[i] == all[i - 1])
			continue;
		if (n < max)
			out[n] = all[i];
		n++;
	}
	free(all);
	return n;
}

const char *ss_e2e_thread_name(const struct ss_e2e_trace *tr, int64_t pid,
			       int64_t tid)
{
	for (size_t i = 0; i < tr->nthreads; i++)
		if (tr->threads[i].pid == pid && tr->threads[i].tid == tid)
			return tr->threads[i].name;
	return NULL;
}

const char *ss_e2e_process_name(const struct ss_e2e_trace *tr, int64_t pid)
{
	for (size_t i = 0; i < tr->nprocesses; i++)
		if (tr->processes[i].pid == pid)
			return tr->processes[i].name;
	return NULL;
}

static int cmp_slice(const void *a, const void *b)
{
	const struct ss_e2e_slice *x = *(const struct ss_e2e_slice *const *)a;
	const struct ss_e2e_slice *y = *(const struct ss_e2e_slice *const *)b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->ts_ns != y->ts_ns)
		return x->ts_ns < y->ts_ns ? -1 : 1;
	if (x->dur_ns != y->dur_ns)
		return x->dur_ns > y->dur_ns ? -1 : 1; /* longer first */
	return x->index < y->index ? -1 : x->index > y->index;
}

static void describe(char *buf, size_t len, const struct ss_e2e_slice *s)
{
	snprintf(buf, len, "'%s' [%lld.%03lld us, %lld.%03lld us]", s->name,
		 (long long)(s->ts_ns / 1000), (long long)(s->ts_ns % 1000),
		 (long long)((s->ts_ns + s->dur_ns) / 1000),
		 (long long)((s->ts_ns + s->dur_ns) % 1000));
}

int ss_e2e_check_nesting(struct ss_e2e_trace *tr, unsigned cats, char *err,
			 size_t errlen)
{
	struct ss_e2e_slice **v = malloc((tr->nslices + 1) * sizeof(*v));
	struct ss_e2e_slice **stack = malloc((tr->nslices + 1) * sizeof(*v));
	if (!v || !stack)
		abort();
	size_t n = 0;
	for (size_t i = 0; i < tr->nslices; i++) {
		tr->slices[i].parent = -1;
		if (tr->slices[i].catbit & cats)
			v[n++] = &tr->slices[i];
	}
	qsort(v, n, sizeof(*v), cmp_slice);
	int rc = 0;
	size_t depth = 0;
	for (size_t i = 0; i < n; i++) {
		struct ss_e2e_slice *s = v[i];
		if (i > 0 && (v[i - 1]->pid != s->pid || v[i - 1]->tid != s->tid))
			depth = 0; /* a new thread */
		int64_t end = s->ts_ns + s->dur_ns;
		while (depth > 0) {
			const struct ss_e2e_slice *top = stack[depth - 1];
			int64_t top_end = top->ts_ns + top->dur_ns;
			/* Ends before s starts, or where s starts and s goes
			 * on after it: not an ancestor.  An empty s right at
			 * the end of top stays inside it (a frame cut off at
			 * the last event of the run looks like that). */
			if (top_end < s->ts_ns ||
			    (top_end == s->ts_ns && s->dur_ns > 0))
				depth--;
			else
				break;
		}
		if (depth > 0) {
			struct ss_e2e_slice *top = stack[depth - 1];
			if (end > top->ts_ns + top->dur_ns && rc == 0) {
				char a[200], b[200];
				describe(a, sizeof(a), s);
				describe(b, sizeof(b), top);
				set_err(err, errlen,
					"tid %lld: %s starts inside %s but ends "
					"after it",
					(long long)s->tid, a, b);
				rc = -1;
			}
			s->parent = (long)top->index;
		}
		stack[depth++] = s;
	}
	free(v);
	free(stack);
	return rc;
}

const char *ss_e2e_parent_name(const struct ss_e2e_trace *tr,
			       const struct ss_e2e_slice *s)
{
	return s->parent < 0 ? NULL : tr->slices[s->parent].name;
}

int ss_e2e_chain(const struct ss_e2e_trace *tr, const struct ss_e2e_slice *s,
		 const char *name)
{
	int n = 0;
	for (;;) {
		if (!strcmp(s->name, name))
			n++;
		if (s->parent < 0)
			return n;
		s = &tr->slices[s->parent];
	}
}

int ss_e2e_max_chain(const struct ss_e2e_trace *tr, const char *name)
{
	int best = 0;
	for (size_t i = 0; i < tr->nslices; i++) {
		if (strcmp(tr->slices[i].name, name) != 0)
			continue;
		int c = ss_e2e_chain(tr, &tr->slices[i], name);
		if (c > best)
			best = c;
	}
	return best;
}

const struct ss_e2e_slice *ss_e2e_find(const struct ss_e2e_trace *tr,
				       const char *name, int64_t tid)
{
	for (size_t i = 0; i < tr->nslices; i++) {
		const struct ss_e2e_slice *s = &tr->slices[i];
		if ((!name || !strcmp(s->name, name)) && (!tid || s->tid == tid))
			return s;
	}
	return NULL;
}

/* ------------------------------------------------------------ checks */

/* Where the slices named `name` are, per thread, for a failure message. */
static void show_counts_by_thread(const struct ss_e2e_trace *tr,
				  const char *name, const char *cat)
{
	int64_t tids[64];
	size_t n = ss_e2e_tids(tr, tids, 64);
	print_message("  '%s' per thread:", name ? name : "*");
	for (size_t i = 0; i < n && i < 64; i++) {
		const struct ss_e2e_slice *any = ss_e2e_find(tr, NULL, tids[i]);
		const char *tn = ss_e2e_thread_name(tr, any->pid, tids[i]);
		print_message(" %lld(%s)=%zu", (long long)tids[i],
			      tn ? tn : "?", ss_e2e_count(tr, name, cat, tids[i]));
	}
	print_message("\n");
}

/* Names present on the trace, to spot a renamed function. */
static void show_names(const struct ss_e2e_trace *tr)
{
	print_message("  names in %s:", tr->path);
	int shown = 0;
	for (size_t i = 0; i < tr->nslices && shown < 40; i++) {
		int seen = 0;
		for (size_t j = 0; j < i && !seen; j++)
			seen = !strcmp(tr->slices[j].name, tr->slices[i].name);
		if (!seen) {
			print_message(" %s(%zu)", tr->slices[i].name,
				      ss_e2e_count(tr, tr->slices[i].name, NULL,
						   0));
			shown++;
		}
	}
	print_message("\n");
}

void ss_e2e__expect_count(struct ss_e2e *t, const char *file, int line,
			  const struct ss_e2e_trace *tr, const char *name,
			  const char *cat, int64_t tid, size_t expected)
{
	size_t got = ss_e2e_count(tr, name, cat, tid);
	if (got == expected)
		return;
	show_counts_by_thread(tr, name, cat);
	show_names(tr);
	char where[64] = "all threads";
	if (tid)
		snprintf(where, sizeof(where), "tid %lld", (long long)tid);
	ss_e2e__fail(t, file, line,
		     "slices named '%s' (cat %s) on %s: expected %zu, got %zu",
		     name ? name : "*", cat ? cat : "any", where, expected, got);
}

void ss_e2e__expect_inside(struct ss_e2e *t, const char *file, int line,
			   const struct ss_e2e_trace *tr, const char *child,
			   const char *parent)
{
	size_t seen = 0;
	for (size_t i = 0; i < tr->nslices; i++) {
		const struct ss_e2e_slice *s = &tr->slices[i];
		if (strcmp(s->name, child) != 0)
			continue;
		seen++;
		const char *p = ss_e2e_parent_name(tr, s);
		if (p == parent || (p && parent && !strcmp(p, parent)))
			continue;
		char d[200];
		describe(d, sizeof(d), s);
		print_message("  stack at the offender (innermost first):");
		for (const struct ss_e2e_slice *a = s;;
		     a = &tr->slices[a->parent]) {
			print_message(" %s", a->name);
			if (a->parent < 0)
				break;
		}
		print_message("\n");
		ss_e2e__fail(t, file, line,
			     "%s on tid %lld: expected parent '%s', got '%s'", d,
			     (long long)s->tid, parent ? parent : "(none)",
			     p ? p : "(none)");
	}
	if (seen == 0) {
		show_names(tr);
		ss_e2e__fail(t, file, line,
			     "expected slices named '%s' inside '%s', found no "
			     "'%s' at all",
			     child, parent ? parent : "(none)", child);
	}
}

void ss_e2e__expect_nested(struct ss_e2e *t, const char *file, int line,
			   struct ss_e2e_trace *tr)
{
	char err[512];
	if (ss_e2e_check_nesting(tr, SS_E2E_CAT_FUNCTION | SS_E2E_CAT_USER_RANGE,
				 err, sizeof(err)) != 0)
		ss_e2e__fail(t, file, line,
			     "slices do not nest in %s: %s", tr->path, err);
}

void ss_e2e__expect_status(struct ss_e2e *t, const char *file, int line,
			   int status, int expected)
{
	if (status == expected)
		return;
	ss_e2e_show_last(t, status);
	ss_e2e__fail(t, file, line, "exit status: expected %d, got %d",
		     expected, status);
}

void ss_e2e__expect_lines(struct ss_e2e *t, const char *file, int line,
			  const char *what, const char *text, int expected)
{
	int n = 0;
	for (const char *p = text; *p; p++)
		if (*p == '\n' || p[1] == '\0')
			n++;
	if (n == expected)
		return;
	ss_e2e_show_last(t, -1);
	ss_e2e__fail(t, file, line, "%s: expected %d line(s), got %d", what,
		     expected, n);
}

/* Frame names of Chrome stack frame `id` in `frames` (a trace's
 * "stackFrames"), innermost first, at most max; how many, -1 if a frame
 * has no name. */
int ss_e2e_stack_chain(const cJSON *frames, const char *id, const char **out,
		       int max)
{
	int n = 0;

	while (id && n < max) {
		const cJSON *f = cJSON_GetObjectItemCaseSensitive(frames, id);
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(f, "name");
		const cJSON *parent = cJSON_GetObjectItemCaseSensitive(f, "parent");
		if (!cJSON_IsString(name))
			return -1;
		out[n++] = name->valuestring;
		id = cJSON_IsString(parent) ? parent->valuestring : NULL;
	}
	return n;
}

/* "a <- b <- c" for failure messages. */
void ss_e2e_show_chain(char *buf, size_t len, const char **names, int n)
{
	size_t k = 0;

	buf[0] = 0;
	for (int i = 0; i < n && k + 2 < len; i++)
		k += (size_t)snprintf(buf + k, len - k, "%s%s", i ? " <- " : "", names[i]);
}

/* ------------------------------------------------------------ helpers */

int ss_e2e_cmp_ts(const void *a, const void *b)
{
	double x = cJSON_GetObjectItemCaseSensitive(*(cJSON *const *)a, "ts")->valuedouble;
	double y = cJSON_GetObjectItemCaseSensitive(*(cJSON *const *)b, "ts")->valuedouble;
	return x < y ? -1 : x > y;
}

struct cJSON *ss_e2e_load_json(struct ss_e2e *t, const char *rel)
{
	char path[4200];
	if (rel[0] == '/')
		snprintf(path, sizeof(path), "%s", rel);
	else
		snprintf(path, sizeof(path), "%s/%s", t->dir, rel);
	char *text = slurp(path, NULL);
	SS_E2E_CHECK(t, text != NULL, "cannot read %s", path);
	cJSON *root = cJSON_Parse(text);
	free(text);
	SS_E2E_CHECK(t, root != NULL, "%s is not JSON", path);
	return root;
}

int ss_e2e_lines_with(const char *text, const char *what)
{
	int n = 0;
	for (const char *p = text; p && *p;) {
		const char *end = strchr(p, '\n');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		const char *hit = strstr(p, what);
		n += hit && hit < p + len;
		p = end ? end + 1 : NULL;
	}
	return n;
}

size_t ss_e2e_report_rows(const char *csv, struct ss_e2e_row *rows, size_t max)
{
	size_t n = 0;
	const char *line = strchr(csv, '\n'); /* skip the header */
	while (line && *++line && n < max) {
		char *field[12];
		char buf[512];
		size_t len = strcspn(line, "\n"), nf = 0;
		if (len >= sizeof(buf))
			len = sizeof(buf) - 1;
		memcpy(buf, line, len);
		buf[len] = 0;
		for (char *p = buf, *c; nf < 12; p = c + 1) {
			field[nf++] = p;
			if (!(c = strchr(p, ',')))
				break;
			*c = 0;
		}
		if (nf == 11) { /* ..., calls, clipped */
			snprintf(rows[n].name, sizeof(rows[n].name), "%s", field[0]);
			rows[n].total = strtoull(field[5], NULL, 10);
			rows[n].self = strtoull(field[3], NULL, 10);
			rows[n].calls = strtoull(field[9], NULL, 10);
			n++;
		}
		line = strchr(line, '\n');
	}
	return n;
}

const struct ss_e2e_row *ss_e2e_row_find(const struct ss_e2e_row *rows, size_t n,
					 const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(rows[i].name, name))
			return &rows[i];
	return NULL;
}

double ss_e2e_csv_col(const char *csv, const char *name, const char *col)
{
	char key[160];
	int ci = -1, i = 0;
	size_t cl = strlen(col);
	for (const char *p = csv; *p && *p != '\n'; i++) {
		size_t l = strcspn(p, ",\n");
		if (l == cl && !strncmp(p, col, l))
			ci = i;
		p += l;
		if (*p == ',')
			p++;
	}
	snprintf(key, sizeof(key), "\n%s,", name);
	const char *r = strstr(csv, key);
	if (ci < 0 || !r)
		return -1;
	r++;
	for (i = 0; i < ci && r; i++) {
		r = strchr(r, ',');
		if (r)
			r++;
	}
	return r ? atof(r) : -1;
}

size_t ss_e2e_by_time(const struct ss_e2e_trace *tr, const char *name, const char *cat,
		      int64_t tid, const struct ss_e2e_slice **out, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < tr->nslices && n < max; i++) {
		const struct ss_e2e_slice *s = &tr->slices[i];
		if ((!name || !strcmp(s->name, name)) && (!cat || !strcmp(s->cat, cat)) &&
		    (!tid || s->tid == tid))
			out[n++] = s;
	}
	for (size_t k = 1; k < n; k++)
		for (size_t j = k; j > 0 && out[j - 1]->ts_ns > out[j]->ts_ns; j--) {
			const struct ss_e2e_slice *x = out[j];
			out[j] = out[j - 1];
			out[j - 1] = x;
		}
	return n;
}

long ss_e2e_printed(struct ss_e2e *t, const char *out, const char *what)
{
	char key[64];
	long v = 0;
	snprintf(key, sizeof(key), "%s ", what);
	const char *p = strstr(out, key);
	if (!p || sscanf(p + strlen(key), "%ld", &v) != 1)
		SS_E2E_FAIL(t, "fixture did not print \"%s N\": %s", what, out);
	return v;
}
