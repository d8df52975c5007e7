/*
 * mpi-clock.c - the ranks of an MPI run on one timeline.  On one host every
 * process reads the same CLOCK_MONOTONIC, so nothing moves.  With traces
 * from several hosts (a shared run directory, or `stepscope merge`) each
 * trace is moved to its host's CLOCK_REALTIME (the mapping in its
 * SS_META_RANK record), then each host by the median difference of the
 * times its ranks and the reference host's ranks left the same clock-sync
 * barrier (SS_META_SYNC, written by libstepscope-mpi at MPI_Init and
 * MPI_Finalize).  The reference is the host of the lowest rank.
 * Never: move a run of one host.
 */
#include <stdlib.h>
#include <string.h>

#include "ranks.h"

int ss_ranks_info(const struct ss_reader *r, struct ss_meta_rank *out)
{
	struct ss_meta_iter it;
	struct ss_meta_rec m;
	int found = 0;

	ss_reader_meta_begin(r, &it);
	while (ss_reader_meta_next(&it, &m)) {
		if (m.type != SS_META_RANK || m.len < sizeof(*out))
			continue;
		memcpy(out, m.data, sizeof(*out));
		found = 1;
	}
	return found;
}

void ss_ranks_pname(const struct ss_reader *r, char *buf, size_t len)
{
	struct ss_meta_rank rk;

	if (ss_ranks_info(r, &rk))
		snprintf(buf, len, "rank %llu (%s, pid %llu)", (unsigned long long)rk.rank,
			 r->hdr.hostname[0] ? r->hdr.hostname : "?",
			 (unsigned long long)r->hdr.pid);
	else
		snprintf(buf, len, "%s (pid %llu)", ss_reader_prog(r),
			 (unsigned long long)r->hdr.pid);
}

static int ss_mc_cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

/* Mean time (shifted) at which the processes of host h left sync round k;
 * 0 when none of them has it. */
static int ss_mc_round(struct ss_reader **rs, size_t n, const char *host,
		       uint64_t round, int64_t *out)
{
	double sum = 0;
	size_t cnt = 0, i;

	for (i = 0; i < n; i++) {
		struct ss_meta_iter it;
		struct ss_meta_rec m;
		if (strcmp(rs[i]->hdr.hostname, host))
			continue;
		ss_reader_meta_begin(rs[i], &it);
		while (ss_reader_meta_next(&it, &m)) {
			struct ss_meta_sync s;
			if (m.type != SS_META_SYNC || m.len < sizeof(s))
				continue;
			memcpy(&s, m.data, sizeof(s));
			if (s.round != round)
				continue;
			sum += (double)ss_reader_ns(rs[i], m.ts);
			cnt++;
			break;
		}
	}
	if (!cnt)
		return 0;
	*out = (int64_t)(sum / (double)cnt);
	return 1;
}

size_t ss_ranks_align(struct ss_reader **rs, size_t n, struct ss_ranks_host *hosts,
		      size_t max)
{
	const char *names[256];
	size_t nh = 0, i, h, ref = 0;
	uint64_t ref_rank = UINT64_MAX, rounds[64];
	size_t nrounds = 0;

	for (i = 0; i < n; i++) {
		struct ss_meta_rank rk;
		for (h = 0; h < nh && strcmp(names[h], rs[i]->hdr.hostname); h++)
			;
		if (h == nh && nh < 256)
			names[nh++] = rs[i]->hdr.hostname;
		if (ss_ranks_info(rs[i], &rk) && rk.rank < ref_rank) {
			ref_rank = rk.rank;
			ref = h < nh ? h : 0;
		}
	}
	for (h = 0; h < nh && h < max; h++) {
		memset(&hosts[h], 0, sizeof(hosts[h]));
		snprintf(hosts[h].name, sizeof(hosts[h].name), "%s", names[h]);
	}
	if (ref < max && ref < nh)
		hosts[ref].reference = 1;
	if (nh < 2)
		return nh;
	/* every trace to its host's wall clock */
	for (i = 0; i < n; i++) {
		struct ss_meta_rank rk;
		if (ss_ranks_info(rs[i], &rk) && rk.real_ns)
			rs[i]->shift_ns = (int64_t)rk.real_ns - (int64_t)rk.mono_ns;
		else
			rs[i]->shift_ns = (int64_t)rs[i]->hdr.realtime_ns -
					  (int64_t)rs[i]->hdr.calib_ns;
	}
	/* the sync rounds any trace has */
	for (i = 0; i < n; i++) {
		struct ss_meta_iter it;
		struct ss_meta_rec m;
		ss_reader_meta_begin(rs[i], &it);
		while (ss_reader_meta_next(&it, &m)) {
			struct ss_meta_sync s;
			size_t k;
			if (m.type != SS_META_SYNC || m.len < sizeof(s))
				continue;
			memcpy(&s, m.data, sizeof(s));
			for (k = 0; k < nrounds && rounds[k] != s.round; k++)
				;
			if (k == nrounds && nrounds < 64)
				rounds[nrounds++] = s.round;
		}
	}
	for (h = 0; h < nh; h++) {
		int64_t d[64], off;
		size_t nd = 0, k;
		if (h == ref)
			continue;
		for (k = 0; k < nrounds; k++) {
			int64_t a, b;
			if (ss_mc_round(rs, n, names[ref], rounds[k], &a) &&
			    ss_mc_round(rs, n, names[h], rounds[k], &b))
				d[nd++] = a - b;
		}
		if (!nd)
			continue;
		qsort(d, nd, sizeof(d[0]), ss_mc_cmp_i64);
		off = d[nd / 2];
		for (i = 0; i < n; i++)
			if (!strcmp(rs[i]->hdr.hostname, names[h]))
				rs[i]->shift_ns += off;
		if (h < max) {
			hosts[h].offset_ns = off;
			hosts[h].points = nd;
			hosts[h].spread_ns = d[nd - 1] - d[0];
		}
	}
	return nh;
}
