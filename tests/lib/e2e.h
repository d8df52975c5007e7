/*
 * e2e.h - helpers for end-to-end tests: build a fixture program through
 * stepscope-cc, record it, symbolize it, load trace.json and ask exact
 * questions about it (how many calls of X on thread T, is every Y directly
 * inside a Z, do the slices of each thread form a tree).
 *
 * Design: every test gets a struct ss_e2e (cmocka setup/teardown below) that
 * owns a fresh temp dir under $TMPDIR (or /tmp).  Commands run through
 * /bin/sh inside that dir, with stdout and stderr captured to files there;
 * the environment holds SS_E2E_SRC (the source tree) and SS_E2E_BUILD (the
 * build dir) so commands can say "$SS_E2E_BUILD/bin/stepscope".  A test that
 * reaches ss_e2e_pass() gets its dir removed; any other test keeps it and the
 * teardown prints where it is.
 *
 * The trace model is deliberately small: complete events ("ph":"X") become
 * struct ss_e2e_slice with integer nanoseconds; thread and process names come
 * from the "M" events.  Loading refuses a file whose top-level shape differs
 * from {"displayTimeUnit":"ns","traceEvents":[...],"otherData":{...}}.
 *
 * Every failing check prints what differed (expected vs actual, the command
 * and its output) and then fails the cmocka test; never call these helpers
 * outside a cmocka test.
 */
#ifndef SS_E2E_H
#define SS_E2E_H

#include <stddef.h>
#include <stdint.h>

/* How a fixture is compiled: the compiler given to stepscope-cc and the
 * optimisation level.  Pass one as the cmocka prestate of a test. */
struct ss_e2e_variant {
	const char *cc;  /* "gcc" or "clang" */
	const char *opt; /* "-O0" or "-O2" */
};

extern const struct ss_e2e_variant ss_e2e_gcc_O0, ss_e2e_gcc_O2,
	ss_e2e_clang_O0, ss_e2e_clang_O2;

struct ss_e2e_trace;

/* One test in progress. */
struct ss_e2e {
	const struct ss_e2e_variant *v; /* never NULL (gcc -O0 by default) */
	char dir[4096];                 /* this test's temp dir */
	int passed;                     /* set by ss_e2e_pass */
	int ncmd;                       /* commands run so far */
	char *cmd;                      /* the last command */
	char *out;                      /* its stdout, NUL-terminated */
	char *err;                      /* its stderr, NUL-terminated */
	struct ss_e2e_trace *traces[8]; /* loaded for this test, freed by the
	                                 * teardown */
	int ntraces;
};

/* cmocka test entries for `fn` (a void fn(void **state) that takes its
 * struct ss_e2e from *state): once per variant, named "fn/gcc-O0" etc. */
#define SS_E2E__ONE(fn, var, tag)                                              \
	{ #fn "/" tag, fn, ss_e2e_setup, ss_e2e_teardown, (void *)&(var) }
#define SS_E2E_VARIANTS(fn)                                                    \
	SS_E2E__ONE(fn, ss_e2e_gcc_O0, "gcc-O0"),                              \
	SS_E2E__ONE(fn, ss_e2e_gcc_O2, "gcc-O2"),                              \
	SS_E2E__ONE(fn, ss_e2e_clang_O0, "clang-O0"),                          \
	SS_E2E__ONE(fn, ss_e2e_clang_O2, "clang-O2")
/* Just once, with gcc -O0 (tests that build nothing). */
#define SS_E2E_TEST(fn) SS_E2E__ONE(fn, ss_e2e_gcc_O0, "gcc-O0")

/* cmocka setup and teardown: *state holds a struct ss_e2e_variant * (the
 * prestate, or NULL for gcc -O0) on entry and a struct ss_e2e * after
 * setup. */
int ss_e2e_setup(void **state);
int ss_e2e_teardown(void **state);

/* First line of every test: its struct ss_e2e.  Fails the test, saying
 * which package to install, when the variant's compiler is not installed
 * (`make test` installs every tool the tests use, scripts/deps.sh test). */
struct ss_e2e *ss_e2e_begin(void **state);

/* Fail the test unless the shell command CHECK succeeds (e.g. "command -v
 * cmake"): WHAT is missing, PKG the Debian package that brings it. */
void ss_e2e_need(struct ss_e2e *t, const char *check, const char *what,
		 const char *pkg);

/* Skip the test, printing "e2e: skipped: " and the reason, and remove its
 * temp dir.  Only for what a machine cannot have without hardware (a GPU,
 * the CUDA toolkit) or without privileges no test run is given. */
void ss_e2e_skip(struct ss_e2e *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));

/* Mark the test passed: the teardown removes its temp dir. */
void ss_e2e_pass(struct ss_e2e *t);

/* Apply $SS_TEST_CASE (a cmocka glob such as "*threads*") to the tests this
 * binary runs.  Call from main before cmocka_run_group_tests. */
void ss_e2e_filter_from_env(void);

/* Run a shell command (printf-style) in the test's dir, stdin from
 * /dev/null, stdout and stderr captured into t->out and t->err (and files
 * cmd-N.out / cmd-N.err in the dir).  Returns the exit status, 128+signal if
 * killed, 124 if it ran past $SS_E2E_TIMEOUT seconds (default 120). */
int ss_e2e_sh(struct ss_e2e *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* ss_e2e_sh, and fail the test (showing command and output) unless the
 * status is 0. */
#define SS_E2E_SH_OK(t, ...)                                                   \
	ss_e2e__sh_ok((t), __FILE__, __LINE__, __VA_ARGS__)
void ss_e2e__sh_ok(struct ss_e2e *t, const char *file, int line,
		   const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Print the last command, its status (unless < 0) and its output, for
 * failure messages. */
void ss_e2e_show_last(struct ss_e2e *t, int status);

/* Build tests/e2e/s-NAME.c (plus `extra`: more sources or flags, may be
 * NULL) through stepscope-cc with the test's compiler and -O level and
 * -pthread, into DIR/s-NAME.  Fails the test if the build fails. */
void ss_e2e_build(struct ss_e2e *t, const char *name, const char *extra);

/* `stepscope record -o DIR/rundir -- ./s-NAME args`; returns its status.
 * `rundir` must not exist yet. */
int ss_e2e_record(struct ss_e2e *t, const char *rundir, const char *name,
		  const char *args);

/* `stepscope symbolize DIR/rundir`, which must succeed. */
void ss_e2e_symbolize(struct ss_e2e *t, const char *rundir);

/* ---------------------------------------------------------------- trace */

enum ss_e2e_slice_flags {
	SS_E2E_CLIPPED_BEGIN = 1 << 0, /* args.clipped "begin" or "both" */
	SS_E2E_CLIPPED_END = 1 << 1,   /* args.clipped "end" or "both" */
	SS_E2E_UNWOUND = 1 << 2,       /* args.unwound: a reason, or true */
};

/* Categories, as bits for ss_e2e_check_nesting. */
enum ss_e2e_cat {
	SS_E2E_CAT_FUNCTION = 1 << 0,
	SS_E2E_CAT_USER_RANGE = 1 << 1,
	SS_E2E_CAT_STEP = 1 << 2,
	SS_E2E_CAT_OTHER = 1 << 3,
};

struct ss_e2e_slice {
	char *name;
	char *cat;
	unsigned catbit;  /* enum ss_e2e_cat */
	int64_t pid, tid;
	int64_t ts_ns;    /* "ts" (microseconds, 3 decimals) in nanoseconds */
	int64_t dur_ns;
	char *file;       /* args.file, NULL if absent */
	char *addr;       /* args.addr, NULL if absent */
	unsigned flags;   /* enum ss_e2e_slice_flags */
	size_t index;     /* position among the X events of the file */
	long parent;      /* innermost enclosing slice of the last nesting
	                   * check (index into slices), -1 if none */
};

struct ss_e2e_meta {
	int64_t pid, tid;
	char *name;
};

struct ss_e2e_trace {
	struct ss_e2e_slice *slices;
	size_t nslices;
	struct ss_e2e_meta *threads;   /* thread_name metadata */
	size_t nthreads;
	struct ss_e2e_meta *processes; /* process_name metadata (tid unused) */
	size_t nprocesses;
	char path[4096];
	char nest_err[512];            /* first nesting violation, "" if none */
};

/* Load a trace.json.  0 on success; -1 with a one-line reason in err. */
int ss_e2e_trace_load(struct ss_e2e_trace *tr, const char *path, char *err,
		      size_t errlen);
void ss_e2e_trace_release(struct ss_e2e_trace *tr);

/* Symbolize DIR/rundir and load DIR/rundir/trace.json; the trace is owned by
 * t until the test ends (freed by the teardown).  Fails the test on error.
 * The loaded trace has been checked for nesting of function and user_range
 * slices (see nest_err), which sets every slice's parent. */
struct ss_e2e_trace *ss_e2e_symbolize_load(struct ss_e2e *t,
					   const char *rundir);

/* build + record (status must be 0) + symbolize + load. */
struct ss_e2e_trace *ss_e2e_profile(struct ss_e2e *t, const char *name,
				    const char *extra, const char *args);

/* Slices named `name` (NULL: any) with cat `cat` (NULL: any) on thread
 * `tid` (0: any). */
size_t ss_e2e_count(const struct ss_e2e_trace *tr, const char *name,
		    const char *cat, int64_t tid);

/* Distinct tids that have at least one slice, ascending; returns how many
 * there are (writes at most `max`). */
size_t ss_e2e_tids(const struct ss_e2e_trace *tr, int64_t *out, size_t max);

/* thread_name / process_name of a thread or process, NULL if none. */
const char *ss_e2e_thread_name(const struct ss_e2e_trace *tr, int64_t pid,
			       int64_t tid);
const char *ss_e2e_process_name(const struct ss_e2e_trace *tr, int64_t pid);

/* Check that on every thread the slices whose category is in `cats` form a
 * proper tree: sorted by ts, then by dur descending, each slice lies
 * entirely within the one open around it.  Sets each considered slice's
 * parent.  0 if so; -1 with the first violation (names, times) in err. */
int ss_e2e_check_nesting(struct ss_e2e_trace *tr, unsigned cats, char *err,
			 size_t errlen);

/* Name of the innermost enclosing slice on the same thread (as of the last
 * nesting check), NULL if it has none. */
const char *ss_e2e_parent_name(const struct ss_e2e_trace *tr,
			       const struct ss_e2e_slice *s);

/* How many slices named `name` enclose s, s included: for a recursive
 * function, its depth on the stack at s. */
int ss_e2e_chain(const struct ss_e2e_trace *tr, const struct ss_e2e_slice *s,
		 const char *name);

/* The largest ss_e2e_chain over all slices named `name`. */
int ss_e2e_max_chain(const struct ss_e2e_trace *tr, const char *name);

/* The first slice named `name` (NULL: any) on `tid` (0: any), or NULL. */
const struct ss_e2e_slice *ss_e2e_find(const struct ss_e2e_trace *tr,
				       const char *name, int64_t tid);

/* The number a fixture printed after "what " in out (its stdout); fails
 * the test when there is none. */
long ss_e2e_printed(struct ss_e2e *t, const char *out, const char *what);

/* ---------------------------------------------------------------- checks
 * Each prints expected vs actual and fails the test when it does not hold. */

void ss_e2e__fail(struct ss_e2e *t, const char *file, int line,
		  const char *fmt, ...) __attribute__((format(printf, 4, 5),
						       noreturn));
void ss_e2e__expect_count(struct ss_e2e *t, const char *file, int line,
			  const struct ss_e2e_trace *tr, const char *name,
			  const char *cat, int64_t tid, size_t expected);
void ss_e2e__expect_inside(struct ss_e2e *t, const char *file, int line,
			   const struct ss_e2e_trace *tr, const char *child,
			   const char *parent);
void ss_e2e__expect_nested(struct ss_e2e *t, const char *file, int line,
			   struct ss_e2e_trace *tr);
void ss_e2e__expect_status(struct ss_e2e *t, const char *file, int line,
			   int status, int expected);
void ss_e2e__expect_lines(struct ss_e2e *t, const char *file, int line,
			  const char *what, const char *text, int expected);

/* Fail with a message (printf-style). */
#define SS_E2E_FAIL(t, ...) ss_e2e__fail((t), __FILE__, __LINE__, __VA_ARGS__)
/* Fail unless `cond` holds; the message says what was expected. */
#define SS_E2E_CHECK(t, cond, ...)                                             \
	do {                                                                   \
		if (!(cond))                                                   \
			ss_e2e__fail((t), __FILE__, __LINE__, __VA_ARGS__);    \
	} while (0)
/* Exactly `n` function slices named `name` on `tid` (0: any thread). */
#define SS_E2E_EXPECT_CALLS(t, tr, name, tid, n)                               \
	ss_e2e__expect_count((t), __FILE__, __LINE__, (tr), (name),            \
			     "function", (tid), (n))
/* Exactly `n` slices named `name` of category `cat` on `tid`. */
#define SS_E2E_EXPECT_COUNT(t, tr, name, cat, tid, n)                          \
	ss_e2e__expect_count((t), __FILE__, __LINE__, (tr), (name), (cat),     \
			     (tid), (n))
/* Every slice named `child` is directly inside one named `parent`
 * (parent NULL: at the top of its thread), and there is at least one. */
#define SS_E2E_EXPECT_INSIDE(t, tr, child, parent)                             \
	ss_e2e__expect_inside((t), __FILE__, __LINE__, (tr), (child), (parent))
/* Function and user_range slices nest properly on every thread. */
#define SS_E2E_EXPECT_NESTED(t, tr)                                            \
	ss_e2e__expect_nested((t), __FILE__, __LINE__, (tr))
/* The last command exited with `expected`. */
#define SS_E2E_EXPECT_STATUS(t, status, expected)                              \
	ss_e2e__expect_status((t), __FILE__, __LINE__, (status), (expected))
/* `text` (named `what` in the message) has exactly `n` lines. */
#define SS_E2E_EXPECT_LINES(t, what, text, n)                                  \
	ss_e2e__expect_lines((t), __FILE__, __LINE__, (what), (text), (n))

/* Chrome "stackFrames" helpers for the record.stack tests. */
struct cJSON;
int ss_e2e_stack_chain(const struct cJSON *frames, const char *id,
		       const char **out, int max);
void ss_e2e_show_chain(char *buf, size_t len, const char **names, int n);

/* ------------------------------------------------------------ helpers */

/* The whole file `rel` (relative to t->dir, or absolute) parsed as JSON;
 * fails the test when it cannot be read or is not JSON.  cJSON_Delete it. */
struct cJSON *ss_e2e_load_json(struct ss_e2e *t, const char *rel);
/* qsort comparator of trace.json events (cJSON * elements) by their "ts". */
int ss_e2e_cmp_ts(const void *a, const void *b);

/* How many lines of `text` contain `what`. */
int ss_e2e_lines_with(const char *text, const char *what);

/* A function row of `stepscope report --format csv`: name, total_ns (6th
 * column), calls (10th); ss_e2e_report_rows() fills up to max of them
 * from the CSV text (header skipped, rows of 11 columns) and returns how
 * many. */
struct ss_e2e_row {
	char name[128];
	unsigned long long calls, total, self;
};
size_t ss_e2e_report_rows(const char *csv, struct ss_e2e_row *rows, size_t max);
/* The row of function `name` among rows[0..n), NULL if it has none. */
const struct ss_e2e_row *ss_e2e_row_find(const struct ss_e2e_row *rows, size_t n,
					 const char *name);
/* The cell of column `col` (named in csv's first line) in the row whose
 * first field is `name`, as a double; -1 when there is none. */
double ss_e2e_csv_col(const char *csv, const char *name, const char *col);
/* Up to max slices of tr named name, of category cat, on thread tid (NULL,
 * NULL, 0: any) into out, by start time; how many. */
size_t ss_e2e_by_time(const struct ss_e2e_trace *tr, const char *name, const char *cat,
		      int64_t tid, const struct ss_e2e_slice **out, size_t max);

#endif /* SS_E2E_H */
