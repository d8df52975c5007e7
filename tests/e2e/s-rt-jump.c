/*
 * s-rt-jump.c - fixture: frames skipped by longjmp and siglongjmp, and
 * signal handlers nested under the function they interrupted.
 *
 *   s-rt-jump longjmp:    main -> jumper() x3; each: setjmp, then
 *                         level1 -> level2 -> level3 -> longjmp back,
 *                         then after_jump() inside jumper
 *   s-rt-jump siglongjmp: main -> guarded(): sigsetjmp, then risky ->
 *                         fault -> raise(SIGUSR1) -> on_usr1 -> siglongjmp
 *                         back, then recovered() inside guarded
 *   s-rt-jump raise:      main -> outer() -> raise(SIGUSR2) -> on_usr2 ->
 *                         in_handler(); outer returns normally
 *   s-rt-jump timer:      main -> spin() calls busy() until SIGALRM (1 ms
 *                         interval timer) was handled 20 times; on_alarm
 *                         calls tick(); prints "alarms N"
 *   s-rt-jump itimer:     main -> churn() calls leaf() in a loop until a
 *                         200 us interval timer was handled 300 times;
 *                         on_tick (the handler) calls tick(); run with
 *                         buffer_kb=64 so that many ticks land in a chunk
 *                         refill; prints "ticks N"
 *   s-rt-jump deep:       main -> descend(10000) recursive; at the bottom
 *                         longjmp back to main, then after_jump() in main
 */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>

#include "fixture.h"

DEFINE_SINK;

static jmp_buf env;
static sigjmp_buf senv;
static volatile sig_atomic_t alarms;

NOINLINE void after_jump(int i)
{
	SINK(i);
}

NOINLINE void level3(int i)
{
	SINK(i);
	longjmp(env, i + 1);
}

NOINLINE void level2(int i)
{
	level3(i);
	SINK(i);
}

NOINLINE void level1(int i)
{
	level2(i);
	SINK(i);
}

NOINLINE void jumper(int i)
{
	if (setjmp(env) == 0)
		level1(i);
	after_jump(i);
}

NOINLINE void on_usr1(int sig)
{
	SINK(sig);
	siglongjmp(senv, 1);
}

NOINLINE void fault(void)
{
	raise(SIGUSR1);
	SINK(1);
}

NOINLINE void risky(void)
{
	fault();
	SINK(2);
}

NOINLINE void recovered(void)
{
	SINK(3);
}

NOINLINE void guarded(void)
{
	if (sigsetjmp(senv, 1) == 0)
		risky();
	recovered();
}

NOINLINE void in_handler(int sig)
{
	SINK(sig);
}

NOINLINE void on_usr2(int sig)
{
	in_handler(sig);
}

NOINLINE void outer(void)
{
	raise(SIGUSR2);
	SINK(4);
}

NOINLINE void tick(void)
{
	SINK(5);
}

NOINLINE void on_alarm(int sig)
{
	tick();
	alarms++;
	SINK(sig);
}

NOINLINE void busy(void)
{
	for (int i = 0; i < 1000; i++)
		SINK(i);
}

NOINLINE void spin(void)
{
	while (alarms < 20)
		busy();
}

static volatile sig_atomic_t ticks;

NOINLINE void leaf(int i)
{
	SINK(i);
}

NOINLINE void churn(void)
{
	for (int i = 0; ticks < 300; i++)
		leaf(i);
}

NOINLINE void on_tick(int sig)
{
	tick();
	ticks++;
	SINK(sig);
}

NOINLINE void descend(int n)
{
	if (n > 1)
		descend(n - 1);
	else
		longjmp(env, 1);
	SINK(n);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "longjmp";
	if (!strcmp(mode, "longjmp")) {
		for (int i = 0; i < 3; i++)
			jumper(i);
	} else if (!strcmp(mode, "siglongjmp")) {
		signal(SIGUSR1, on_usr1);
		guarded();
	} else if (!strcmp(mode, "raise")) {
		signal(SIGUSR2, on_usr2);
		outer();
	} else if (!strcmp(mode, "timer")) {
		struct itimerval it = { { 0, 1000 }, { 0, 1000 } };
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_alarm;
		sa.sa_flags = SA_RESTART;
		sigaction(SIGALRM, &sa, NULL);
		setitimer(ITIMER_REAL, &it, NULL);
		spin();
		memset(&it, 0, sizeof(it));
		setitimer(ITIMER_REAL, &it, NULL);
		printf("alarms %d\n", (int)alarms);
	} else if (!strcmp(mode, "itimer")) {
		struct itimerval it = { { 0, 200 }, { 0, 200 } };
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_tick;
		sa.sa_flags = SA_RESTART;
		sigaction(SIGALRM, &sa, NULL);
		setitimer(ITIMER_REAL, &it, NULL);
		churn();
		memset(&it, 0, sizeof(it));
		setitimer(ITIMER_REAL, &it, NULL);
		printf("ticks %d\n", (int)ticks);
	} else if (!strcmp(mode, "deep")) {
		if (setjmp(env) == 0)
			descend(10000);
		after_jump(0);
	}
	return 0;
}
