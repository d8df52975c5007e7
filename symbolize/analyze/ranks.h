/*
 * ranks.h - MPI runs: which rank a trace is (SS_META_RANK), naming the
 * process "rank N (host, pid P)", putting the traces of several hosts on
 * one clock (mpi-clock.c), and `stepscope report --ranks` (ranks.c).
 * docs/mpi.md explains the clock alignment and its accuracy.
 */
#ifndef SS_RANKS_H
#define SS_RANKS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "format.h"
#include "reader.h"

/* The last SS_META_RANK record of r into *out: 1, or 0 when r has none. */
int ss_ranks_info(const struct ss_reader *r, struct ss_meta_rank *out);

/* The process name exporters show: "rank N (host, pid P)" for a rank,
 * else "PROG (pid P)". */
void ss_ranks_pname(const struct ss_reader *r, char *buf, size_t len);

/* Grow a rank's two per-step arrays (step time, MPI time; *nsteps long)
 * so step fits, zeroing the new entries: 0, or -1 out of memory (each
 * array that did grow is kept). */
int ss_ranks_grow_steps(uint64_t **step_ns, uint64_t **mpi_ns, size_t *nsteps, uint64_t step);

/* One host of a multi-host run and how its clock was moved. */
struct ss_ranks_host {
	char name[256];
	int64_t offset_ns;   /* added to its wall-clock times */
	size_t points;       /* sync points it was estimated from (0: none) */
	int64_t spread_ns;   /* max - min of those points' differences */
	int reference;       /* the host of the lowest rank: not moved */
};

/* Traces from more than one host: set each reader's shift_ns so every
 * time is CLOCK_REALTIME of the host, corrected by the offset estimated
 * from the clock-sync barriers (SS_META_SYNC) against the host of the
 * lowest rank.  Fills up to max hosts; returns how many hosts the run
 * has (1: nothing was shifted).  Call before slicers are made. */
size_t ss_ranks_align(struct ss_reader **rs, size_t n, struct ss_ranks_host *hosts,
		      size_t max);

/* `stepscope report DIR --ranks`: the per-step table, the stragglers and
 * the functions across ranks, as text into out (NULL: stdout), at most
 * limit function rows (0: all).  The exit status (2 when the run has no
 * ranks, with the reason on stderr). */
int ss_ranks_report(const char *dir, const char *backend, int quiet, const char *out,
		    int limit);

/* The per-rank step chart section of the HTML report (nothing when the
 * run in dir has no ranks). */
void ss_ranks_html(FILE *f, const char *dir, const char *backend);

#endif /* SS_RANKS_H */
