/*
 * alloc-device.c - Self CUDA Mem and CUDA Mem per device
 * (alloc-device.h): report's section "CUDA memory by device" and the
 * per-device csv columns and json keys.
 *
 * How: an exporter whose `alloc` callback gets each process's records
 * (read/alloc-read.c); each record of a CUDA space (device or managed
 * memory: ss_alloc_space_cuda) adds its signed bytes to its device's
 * slot of the function it was made in (self) and of every distinct
 * function on its call path (total), keyed by (pid, tid, name) and by
 * name alone for the merged rows, in alloc-keys.c's table as
 * alloc-report.c keeps the sums.
 *
 * Never: show a device that recorded nothing, or print the section when
 * there is one device (the main table's CUDA columns are that device's).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "alloc-device.h"
#include "alloc-keys.h"
#include "alloc-read.h"

struct dkey {
	struct ss_alloc_key k;      /* first: alloc-keys.h's record */
	int64_t self[SS_ALLOC_DEVICES], total[SS_ALLOC_DEVICES];
};

struct ss_alloc_device {
	struct ss_exporter ex;
	struct ss_alloc_keys keys;  /* of struct dkey */
	uint32_t seen[SS_ALLOC_DEVICES]; /* devices with records */
	uint32_t devs[SS_ALLOC_DEVICES]; /* their ordinals, ascending */
	size_t ndevs;
	int oom;
};

struct dadd {
	int64_t delta;
	unsigned dev;
};

static void dkey_add(void *rec, int self, const void *arg)
{
	struct dkey *k = rec;
	const struct dadd *a = arg;
	if (self)
		k->self[a->dev] += a->delta;
	else
		k->total[a->dev] += a->delta;
}

static void ad_alloc(void *ctx, uint64_t pid, const struct ss_alloc_data *d)
{
	struct ss_alloc_device *m = ctx;
	for (size_t i = 0; i < d->nev; i++) {
		const struct ss_alloc_ev *e = &d->ev[i];
		if (!ss_alloc_space_cuda(e->space))
			continue;
		unsigned dev = SS_SPACE_DEVICE(e->space);
		if (dev >= SS_ALLOC_DEVICES)
			dev = SS_ALLOC_DEVICES - 1;
		if (!m->seen[dev]) {
			m->seen[dev] = 1;
			m->ndevs = 0;
			for (uint32_t k = 0; k < SS_ALLOC_DEVICES; k++)
				if (m->seen[k])
					m->devs[m->ndevs++] = k;
		}
		struct dadd add = { e->delta, dev };
		if (e->node && ss_alloc_keys_path(&m->keys, pid, e->tid, d->nodes, e->node,
						  dkey_add, &add))
			m->oom = 1;
	}
}

static int ad_end(void *ctx, char *err, size_t errlen)
{
	return ss_export_oom_end(((struct ss_alloc_device *)ctx)->oom, err, errlen);
}

static void ad_release(void *ctx)
{
	struct ss_alloc_device *m = ctx;
	ss_alloc_keys_release(&m->keys);
	free(m);
}

struct ss_exporter *ss_alloc_device_new(void)
{
	struct ss_alloc_device *m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	ss_alloc_keys_init(&m->keys, sizeof(struct dkey));
	m->ex.ctx = m;
	m->ex.end = ad_end;
	m->ex.release = ad_release;
	m->ex.alloc = ad_alloc;
	ss_exporter_nops(&m->ex);
	return &m->ex;
}

const struct ss_alloc_device *ss_alloc_device_of(const struct ss_exporter *e)
{
	return e ? e->ctx : NULL;
}

size_t ss_alloc_device_list(const struct ss_alloc_device *m, const uint32_t **devs)
{
	if (devs)
		*devs = m ? m->devs : NULL;
	return m ? m->ndevs : 0;
}

void ss_alloc_device_row(const struct ss_alloc_device *m, const struct ss_agg_row *r,
			 size_t i, int64_t *self, int64_t *total)
{
	const struct dkey *k = NULL;
	*self = *total = 0;
	if (m && i < m->ndevs && r->kind == SS_AGG_FUNCTION && r->name)
		k = ss_alloc_keys_find(&m->keys, r->pid, r->tid, r->name);
	if (k) {
		*self = k->self[m->devs[i]];
		*total = k->total[m->devs[i]];
	}
}

/* "1.50 MiB", "-512 B" */
static char *fmt_bytes(int64_t b, char *buf, size_t len)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	uint64_t a = b < 0 ? -(uint64_t)b : (uint64_t)b;
	double v = (double)a;
	int u = 0;
	while (v >= 1024 && u < 4)
		v /= 1024, u++;
	if (!u)
		snprintf(buf, len, "%s%" PRIu64 " B", b < 0 ? "-" : "", a);
	else
		snprintf(buf, len, "%s%.2f %s", b < 0 ? "-" : "", v, unit[u]);
	return buf;
}

void ss_alloc_device_section(FILE *f, const struct ss_alloc_device *m,
			     const struct ss_agg_row *rows, size_t n)
{
	if (!m || m->ndevs < 2)
		return;
	int w = 4;
	size_t shown = 0;
	for (size_t k = 0; k < n; k++) {
		int any = 0;
		for (size_t i = 0; i < m->ndevs; i++) {
			int64_t s, t;
			ss_alloc_device_row(m, &rows[k], i, &s, &t);
			any |= s || t;
		}
		if (any && rows[k].name && (int)strlen(rows[k].name) > w)
			w = (int)strlen(rows[k].name);
	}
	if (w > 60)
		w = 60;
	fprintf(f, "\nCUDA memory by device (Self CUDA Mem / CUDA Mem of each function's blocks "
		"on that device):\n  %-*s", w, "Name");
	for (size_t i = 0; i < m->ndevs; i++) {
		char h[2][32];
		snprintf(h[0], sizeof(h[0]), "Self cuda:%u", m->devs[i]);
		snprintf(h[1], sizeof(h[1]), "cuda:%u", m->devs[i]);
		fprintf(f, "  %14s  %14s", h[0], h[1]);
	}
	fputc('\n', f);
	for (size_t k = 0; k < n; k++) {
		const struct ss_agg_row *r = &rows[k];
		int64_t s[SS_ALLOC_DEVICES], t[SS_ALLOC_DEVICES];
		int any = 0;
		for (size_t i = 0; i < m->ndevs; i++) {
			ss_alloc_device_row(m, r, i, &s[i], &t[i]);
			any |= s[i] || t[i];
		}
		if (!any)
			continue;
		fprintf(f, "  %-*.*s", w, w, r->name);
		for (size_t i = 0; i < m->ndevs; i++) {
			char b[2][48];
			fprintf(f, "  %14s  %14s", fmt_bytes(s[i], b[0], sizeof(b[0])),
				fmt_bytes(t[i], b[1], sizeof(b[1])));
		}
		fputc('\n', f);
		shown++;
	}
	if (!shown)
		fprintf(f, "  (no function in the table has any)\n");
}

void ss_alloc_device_csv_header(FILE *f, const struct ss_alloc_device *m)
{
	for (size_t i = 0; m && m->ndevs >= 2 && i < m->ndevs; i++)
		fprintf(f, ",self_cuda_mem_dev%u,cuda_mem_dev%u", m->devs[i], m->devs[i]);
}

void ss_alloc_device_csv_row(FILE *f, const struct ss_alloc_device *m,
			     const struct ss_agg_row *r)
{
	for (size_t i = 0; m && m->ndevs >= 2 && i < m->ndevs; i++) {
		int64_t s, t;
		ss_alloc_device_row(m, r, i, &s, &t);
		fprintf(f, ",%" PRId64 ",%" PRId64, s, t);
	}
}

void ss_alloc_device_json_row(FILE *f, const struct ss_alloc_device *m,
			      const struct ss_agg_row *r)
{
	if (!m || !m->ndevs)
		return;
	for (int self = 0; self < 2; self++) {
		fprintf(f, ",\"%scuda_mem_by_device\":{", self ? "self_" : "");
		for (size_t i = 0; i < m->ndevs; i++) {
			int64_t s, t;
			ss_alloc_device_row(m, r, i, &s, &t);
			fprintf(f, "%s\"%u\":%" PRId64, i ? "," : "", m->devs[i], self ? s : t);
		}
		fputc('}', f);
	}
}
