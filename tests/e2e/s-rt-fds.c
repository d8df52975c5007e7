/*
 * s-rt-fds.c - fixture: a program that closes descriptors it did not open
 * (as daemons and launchers do) while it is being recorded, then writes a
 * file of its own through the lowest free descriptor.
 *
 *   s-rt-fds loop:      128 steps of step_fn() -> leaf() x 50; at step 16
 *                       close(3..1023), open ckpt.bin, and write a 1 MiB
 *                       pattern into it across the remaining steps
 *   s-rt-fds closefrom: the same, closing every fd >= 3 with closefrom()
 *   s-rt-fds lost:      as closefrom, and also renames the run directory
 *                       ($STEPSCOPE_DIR) to <dir>.moved: the runtime can
 *                       neither keep nor reopen its file
 *   s-rt-fds verify:    exit 0 if ckpt.bin holds exactly the pattern,
 *                       else print what differs and exit 1
 * Prints "fd N" (the descriptor its file got) and "steps 128".
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"

DEFINE_SINK;

#define CKPT_SIZE (1024 * 1024 + 123)
#define STEPS 128

static unsigned char pattern(long i)
{
	return (unsigned char)(i * 7 + 3);
}

NOINLINE void leaf(int i)
{
	SINK(i);
}

NOINLINE void step_fn(int s)
{
	for (int i = 0; i < 50; i++)
		leaf(s + i);
}

/* lost: after the directory moved, more events than the chunks the
 * pool already holds (up to 8 x 64 KiB), so the runtime must reserve one
 * through the lost descriptor */
NOINLINE void burst(int s)
{
	for (int i = 0; i < 2000; i++)
		leaf(s + i);
}

static int verify(void)
{
	FILE *f = fopen("ckpt.bin", "rb");
	if (!f) {
		printf("ckpt.bin: cannot open\n");
		return 1;
	}
	long n = 0;
	int c;
	while ((c = getc(f)) != EOF) {
		if (c != pattern(n)) {
			printf("ckpt.bin: byte %ld is %d, expected %d\n", n, c, pattern(n));
			fclose(f);
			return 1;
		}
		n++;
	}
	fclose(f);
	if (n != CKPT_SIZE) {
		printf("ckpt.bin: %ld bytes, expected %d\n", n, CKPT_SIZE);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "loop";
	if (!strcmp(mode, "verify"))
		return verify();
	static unsigned char buf[CKPT_SIZE];
	for (long i = 0; i < CKPT_SIZE; i++)
		buf[i] = pattern(i);
	int fd = -1;
	long done = 0, per = CKPT_SIZE / (STEPS - 16) + 1;
	for (int s = 0; s < STEPS; s++) {
		if (s == 16) {
			fflush(stdout);
			/* lost: the directory moves first, so the runtime's
			 * background thread cannot reopen the file by path
			 * between the two */
			if (!strcmp(mode, "lost") && getenv("STEPSCOPE_DIR")) {
				char moved[PATH_MAX];
				snprintf(moved, sizeof(moved), "%s.moved", getenv("STEPSCOPE_DIR"));
				if (rename(getenv("STEPSCOPE_DIR"), moved))
					perror("rename");
			}
			if (!strcmp(mode, "closefrom") || !strcmp(mode, "lost"))
				closefrom(3);
			else
				for (int k = 3; k < 1024; k++)
					close(k);
			fd = open("ckpt.bin", O_WRONLY | O_CREAT | O_TRUNC, 0644);
			if (fd < 0) {
				perror("ckpt.bin");
				return 1;
			}
			printf("fd %d\n", fd);
		}
		step_fn(s);
		if (s >= 16 && !strcmp(mode, "lost"))
			burst(s);
		if (fd >= 0 && done < CKPT_SIZE) {
			long n = CKPT_SIZE - done < per ? CKPT_SIZE - done : per;
			if (write(fd, buf + done, (size_t)n) != n) {
				perror("write");
				return 1;
			}
			done += n;
		}
	}
	close(fd);
	printf("steps %d\n", STEPS);
	return 0;
}
