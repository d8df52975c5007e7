/*
 * s-rt-harm.c - fixture: what real trainers and their libraries do that a
 * profiler must survive without hanging, losing or splitting calls.  The
 * program counts its own calls (atomic counters in the function bodies)
 * and prints them, so the test compares the trace with the program.
 *
 *   s-rt-harm forkenv N:  a thread loops on setenv() while main calls
 *                         train_step() and then fork()s N times; each
 *                         child only _exit(0)s.  A child still there after
 *                         10 s is hung (killed); prints "hung H of N"
 *   s-rt-harm sigjump MS: an interval timer (100 us) for MS ms while
 *                         main calls train_step() in a loop; train_step
 *                         calls leaf() in a loop; the handler calls
 *                         in_handler() and every 5th one siglongjmps back
 *                         into train_step; prints "train T leaf L handler
 *                         H jumps J"
 *   s-rt-harm sigtimer N: train_step() calls leaf() N times under a
 *                         100 us timer whose handler calls in_handler();
 *                         no jump anywhere; prints "leaf L handler H"
 *   s-rt-harm ucontext:   main -> foo -> swapcontext to a context running
 *                         bar, which returns to foo; then baz; prints
 *                         "foo 1 bar 1 baz 1"
 *   s-rt-harm uctx local|heap: uftrace's s-ucontext.c: main makes a
 *                         context on a stack that is an array in main's
 *                         frame (local) or malloc'ed (heap), running
 *                         uc_bar(10) and linked back to the context
 *                         uc_foo saves; main -> uc_foo swapcontext()s to
 *                         it; uc_bar returns through uc_link into uc_foo;
 *                         then main calls uc_baz; prints "foo F bar B
 *                         baz Z"
 *   s-rt-harm gen N:      a generator on a stack in main's frame: main
 *                         calls gen_next() until the producer is done;
 *                         each gen_next swapcontext()s to the producer,
 *                         which calls make_value and yield_value N times
 *                         (yield_value swaps back to gen_next) and then
 *                         returns through uc_link into the last gen_next;
 *                         prints "next X producer P yield Y make M"
 *   s-rt-harm kill3 FILE: three threads call leaf() in a loop for 200 ms,
 *                         then the process SIGKILLs itself; the leaf count
 *                         is kept in FILE (a shared mapping), which the
 *                         test reads after the death
 *   s-rt-harm env:        prints the STEPSCOPE* variables the program
 *                         sees, one "NAME=VALUE" a line, then "end"
 *   s-rt-harm preinit:    an instrumented function runs from
 *                         .preinit_array, before any constructor; main
 *                         calls train_step(); prints "early E"
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "fixture.h"

DEFINE_SINK;

static atomic_long n_train, n_leaf, n_handler, n_early, n_foo, n_bar, n_baz;
static atomic_long n_ufoo, n_ubar, n_ubaz, n_next, n_prod, n_yield, n_make;
static sigjmp_buf jump_env;
static volatile sig_atomic_t jumping, in_step, stop_spin;
static atomic_long n_jumps, n_ticks;

NOINLINE void leaf(int i)
{
	atomic_fetch_add(&n_leaf, 1);
	SINK(i);
}

NOINLINE void in_handler(int sig)
{
	atomic_fetch_add(&n_handler, 1);
	SINK(sig);
}

static void on_alarm(int sig)
{
	in_handler(sig);
	long n = atomic_fetch_add(&n_ticks, 1) + 1;
	if (in_step && n % 5 == 0) {
		atomic_fetch_add(&n_jumps, 1);
		siglongjmp(jump_env, 1);
	}
}

NOINLINE void train_step(int calls)
{
	atomic_fetch_add(&n_train, 1);
	volatile int i = 0;
	if (jumping) {
		sigsetjmp(jump_env, 1); /* a jump lands here and goes on */
		in_step = 1;
	}
	for (; i < calls; i++)
		leaf(i);
	in_step = 0;
}

static void start_timer(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = { { 0, 100 }, { 0, 100 } };
	setitimer(ITIMER_REAL, &it, NULL);
}

static void stop_timer(void)
{
	struct itimerval it;
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	signal(SIGALRM, SIG_IGN);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *spin_env(void *arg)
{
	char v[32];
	for (unsigned long i = 0; !stop_spin; i++) {
		snprintf(v, sizeof(v), "%lu", i);
		setenv("SPIN", v, 1);
	}
	return arg;
}

static int forkenv(int n)
{
	pthread_t th;
	pthread_create(&th, NULL, spin_env, NULL);
	int hung = 0;
	for (int i = 0; i < n; i++) {
		train_step(10);
		pid_t pid = fork();
		if (pid == 0)
			_exit(0);
		double until = now_s() + 10;
		int st, done = 0;
		while (!done && now_s() < until) {
			if (waitpid(pid, &st, WNOHANG) == pid)
				done = 1;
			else
				usleep(200);
		}
		if (!done) {
			hung++;
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
		}
	}
	stop_spin = 1;
	pthread_join(th, NULL);
	printf("hung %d of %d\n", hung, n);
	return 0;
}

static int sigjump(int ms)
{
	jumping = 1;
	start_timer();
	double until = now_s() + ms / 1000.0;
	while (now_s() < until)
		train_step(1000);
	stop_timer();
	printf("train %ld leaf %ld handler %ld jumps %ld\n", (long)n_train,
	       (long)n_leaf, (long)n_handler, (long)n_jumps);
	return 0;
}

static int sigtimer(int n)
{
	start_timer();
	train_step(n);
	stop_timer();
	printf("leaf %ld handler %ld\n", (long)n_leaf, (long)n_handler);
	return 0;
}

static volatile sig_atomic_t stop_work;
static long *shared_count;

NOINLINE void work(void)
{
	for (int i = 0; !stop_work; i++) {
		leaf(i);
		__atomic_fetch_add(shared_count, 1, __ATOMIC_RELAXED);
	}
}

static void *worker(void *arg)
{
	work();
	return arg;
}

/* The count lives in a file mapping: it survives the SIGKILL.  It counts
 * leaf calls that returned, so the trace holds at least as many. */
static int kill3(const char *file)
{
	int fd = open(file, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || ftruncate(fd, 4096))
		return 1;
	shared_count = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (shared_count == MAP_FAILED)
		return 1;
	pthread_t th[3];
	for (int i = 0; i < 3; i++)
		pthread_create(&th[i], NULL, worker, NULL);
	usleep(200000);
	kill(getpid(), SIGKILL);
	return 1;
}

static ucontext_t ctx_main, ctx_co;

NOINLINE void bar(void)
{
	atomic_fetch_add(&n_bar, 1);
	SINK(7);
}

static void co_body(void)
{
	bar();
	swapcontext(&ctx_co, &ctx_main);
}

NOINLINE void foo(void)
{
	static char stack[256 * 1024];
	atomic_fetch_add(&n_foo, 1);
	getcontext(&ctx_co);
	ctx_co.uc_stack.ss_sp = stack;
	ctx_co.uc_stack.ss_size = sizeof(stack);
	ctx_co.uc_link = &ctx_main;
	makecontext(&ctx_co, co_body, 0);
	swapcontext(&ctx_main, &ctx_co);
	SINK(8);
}

NOINLINE void baz(void)
{
	atomic_fetch_add(&n_baz, 1);
	SINK(9);
}

NOINLINE void uc_foo(ucontext_t *old, ucontext_t *new)
{
	atomic_fetch_add(&n_ufoo, 1);
	swapcontext(old, new);
	SINK(11);
}

NOINLINE void uc_bar(int c)
{
	atomic_fetch_add(&n_ubar, 1);
	SINK(c);
}

NOINLINE void uc_baz(int c)
{
	atomic_fetch_add(&n_ubaz, 1);
	SINK(c);
}

static ucontext_t gen_main, gen_ctx;
static volatile long gen_value;
static volatile int gen_done;

NOINLINE void yield_value(long v)
{
	atomic_fetch_add(&n_yield, 1);
	gen_value = v;
	swapcontext(&gen_ctx, &gen_main);
	SINK(v);
}

NOINLINE long make_value(long i)
{
	atomic_fetch_add(&n_make, 1);
	SINK(i);
	return i * 3;
}

NOINLINE void producer(int n)
{
	atomic_fetch_add(&n_prod, 1);
	for (int i = 0; i < n; i++)
		yield_value(make_value(i));
	gen_done = 1;
}

NOINLINE long gen_next(void)
{
	atomic_fetch_add(&n_next, 1);
	swapcontext(&gen_main, &gen_ctx);
	SINK(12);
	return gen_value;
}

NOINLINE void early(void)
{
	atomic_fetch_add(&n_early, 1);
	SINK(10);
}

static void preinit_hook(int argc, char **argv, char **envp)
{
	(void)argc, (void)argv, (void)envp;
	early();
}

__attribute__((section(".preinit_array"), used))
static void (*const preinit_entry)(int, char **, char **) = preinit_hook;

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	int n = argc > 2 ? atoi(argv[2]) : 0;
	if (!strcmp(mode, "forkenv"))
		return forkenv(n ? n : 40);
	if (!strcmp(mode, "sigjump"))
		return sigjump(n ? n : 300);
	if (!strcmp(mode, "sigtimer"))
		return sigtimer(n ? n : 200000);
	if (!strcmp(mode, "ucontext")) {
		foo();
		baz();
		printf("foo %ld bar %ld baz %ld\n", (long)n_foo, (long)n_bar,
		       (long)n_baz);
		return 0;
	}
	if (!strcmp(mode, "uctx") && argc > 2) {
		char local[64 * 1024];
		char *stack = strcmp(argv[2], "heap") ? local : malloc(sizeof(local));
		ucontext_t curr, new;
		getcontext(&new);
		new.uc_link = &curr;
		new.uc_stack.ss_sp = stack;
		new.uc_stack.ss_size = sizeof(local);
		makecontext(&new, (void (*)(void))uc_bar, 1, 10);
		uc_foo(&curr, &new);
		uc_baz(10);
		printf("foo %ld bar %ld baz %ld\n", (long)n_ufoo, (long)n_ubar,
		       (long)n_ubaz);
		if (stack != local)
			free(stack);
		return 0;
	}
	if (!strcmp(mode, "gen")) {
		char stack[64 * 1024];
		long sum = 0;
		getcontext(&gen_ctx);
		gen_ctx.uc_link = &gen_main;
		gen_ctx.uc_stack.ss_sp = stack;
		gen_ctx.uc_stack.ss_size = sizeof(stack);
		makecontext(&gen_ctx, (void (*)(void))producer, 1, n ? n : 5);
		while (!gen_done)
			sum += gen_next();
		SINK(sum);
		printf("next %ld producer %ld yield %ld make %ld\n", (long)n_next,
		       (long)n_prod, (long)n_yield, (long)n_make);
		return 0;
	}
	if (!strcmp(mode, "kill3") && argc > 2)
		return kill3(argv[2]);
	if (!strcmp(mode, "env")) {
		extern char **environ;
		train_step(1);
		for (char **e = environ; *e; e++)
			if (!strncmp(*e, "STEPSCOPE", 9))
				printf("%s\n", *e);
		printf("end\n");
		return 0;
	}
	if (!strcmp(mode, "preinit")) {
		train_step(3);
		printf("early %ld\n", (long)n_early);
		return 0;
	}
	fprintf(stderr, "usage: s-rt-harm forkenv|sigjump|sigtimer|ucontext|uctx|gen|preinit [N]\n");
	return 2;
}
