/*
 * gpu-check.c - the checks of the GPU proof kit (tests/gpu/device-check.sh)
 * on one recorded, symbolized run.  It reads what stepscope wrote and what
 * the program said about itself, and prints one line per check: "ok   ..."
 * or "FAIL ...: what differed".  Exit status: the number of failed checks
 * (at most 100), 2 for a usage error.
 *
 *   gpu-check [--label NAME] [--steps N] [--program-output FILE] [--report FILE]
 *             RUN_DIR
 *
 * RUN_DIR holds trace.json and trace.perfetto-trace (`stepscope symbolize`
 * with both formats).  FILE of --program-output is the program's stdout:
 * lines "step N kernels K htod B dtoh B" (its own count of kernel launches
 * and copy bytes in step N, numbered as stepscope numbers steps: the
 * first call of step.function is step 0) and one
 * "nvidia-smi memory.used M MiB" (queried inside the host function
 * query_smi).  FILE of --report is `stepscope report`'s text output.
 * --steps N: the run must hold exactly N recorded steps (else at least 1).
 *
 * Design: no python, no compiler, no protoc where it runs (a bare Debian
 * root, or a GPU machine without Debian packages), so it is plain C on
 * cJSON, with a protobuf walker of its own for the Perfetto trace.  Each
 * check stands alone: a missing input fails its checks and the rest go on.
 * Never: take a check as passed when there was nothing to check.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "check.h"

#define MAX_STEPS 64
#define LAUNCH_WINDOW_US 50000.0        /* a kernel starts within 50 ms */
#define MIB (1024.0 * 1024.0)

static int want_steps = -1;

/* ------------------------------------------------------------ trace.json */

static const char *str(const cJSON *e, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, k);
	return cJSON_IsString(v) ? v->valuestring : "";
}

static double num(const cJSON *e, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, k);
	return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

static double arg(const cJSON *e, const char *k)
{
	return num(cJSON_GetObjectItemCaseSensitive(e, "args"), k);
}

static int is_api(const char *cat)
{
	return !strcmp(cat, "cuda_runtime") || !strcmp(cat, "cuda_driver");
}

struct step {
	int n;                   /* stepscope's step number */
	double ts, dur;          /* us */
	int kernels;             /* launched in the step, from the trace */
	double htod, dtoh;       /* bytes */
	int said;                /* the program printed its counts */
	int p_kernels;
	double p_htod, p_dtoh;
};

static struct step steps[MAX_STEPS];
static int nsteps;

static struct step *step_at(double ts)
{
	for (int i = 0; i < nsteps; i++)
		if (steps[i].ts <= ts && ts <= steps[i].ts + steps[i].dur)
			return &steps[i];
	return NULL;
}

static struct step *step_num(int n)
{
	for (int i = 0; i < nsteps; i++)
		if (steps[i].n == n)
			return &steps[i];
	return NULL;
}

/* The API call (earliest, if several) with correlation id c. */
static const cJSON *api_of(const cJSON *evs, double c)
{
	const cJSON *e, *best = NULL;
	cJSON_ArrayForEach(e, evs)
		if (!strcmp(str(e, "ph"), "X") && is_api(str(e, "cat")) &&
		    arg(e, "correlation") == c && (!best || num(e, "ts") < num(best, "ts")))
			best = e;
	return best;
}

static void read_program(const char *path, double *smi_mib)
{
	FILE *f = fopen(path, "r");
	char line[512];

	*smi_mib = -1;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		int n, k;
		double h, d, m;
		if (sscanf(line, "step %d kernels %d htod %lf dtoh %lf", &n, &k, &h, &d) == 4) {
			struct step *s = step_num(n);
			if (s) {
				s->said = 1;
				s->p_kernels = k;
				s->p_htod = h;
				s->p_dtoh = d;
			}
		} else if (sscanf(line, "nvidia-smi memory.used %lf MiB", &m) == 1) {
			*smi_mib = m;
		}
	}
	fclose(f);
}

static void check_trace(const char *run, const char *prog_out, int *kernels_out)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/trace.json", run);
	char *text = slurp(path, NULL);
	cJSON *root = text ? cJSON_Parse(text) : NULL;
	free(text);
	const cJSON *evs = cJSON_GetObjectItemCaseSensitive(root, "traceEvents");
	const cJSON *e;

	result(cJSON_IsArray(evs), "trace.json reads", "%s%s", path,
	       cJSON_IsArray(evs) ? "" : ": missing or not a Chrome trace");
	if (!cJSON_IsArray(evs)) {
		cJSON_Delete(root);
		return;
	}
	double host_pid = -1;
	cJSON_ArrayForEach(e, evs) {
		if (strcmp(str(e, "cat"), "step") || nsteps == MAX_STEPS)
			continue;
		struct step *s = &steps[nsteps++];
		s->n = -1;
		sscanf(str(e, "name"), "ProfilerStep#%d", &s->n);
		s->ts = num(e, "ts");
		s->dur = num(e, "dur");
		host_pid = num(e, "pid");
	}
	result(want_steps < 0 ? nsteps > 0 : nsteps == want_steps, "recorded steps",
	       want_steps < 0 ? "%d ProfilerStep slices" : "%d ProfilerStep slices, expected %d",
	       nsteps, want_steps);

	/* GPU tracks: a process "GPU N", its threads "stream N" */
	int gpu_procs = 0, streams = 0;
	double gpu_pid = -1;
	cJSON_ArrayForEach(e, evs) {
		const char *name = str(cJSON_GetObjectItemCaseSensitive(e, "args"), "name");
		if (strcmp(str(e, "ph"), "M"))
			continue;
		if (!strcmp(str(e, "name"), "process_name") && !strncmp(name, "GPU ", 4)) {
			gpu_procs++;
			gpu_pid = num(e, "pid");
		}
	}
	cJSON_ArrayForEach(e, evs)
		if (!strcmp(str(e, "ph"), "M") && !strcmp(str(e, "name"), "thread_name") &&
		    num(e, "pid") == gpu_pid &&
		    !strncmp(str(cJSON_GetObjectItemCaseSensitive(e, "args"), "name"), "stream ", 7))
			streams++;

	/* kernels and copies: their launch, their step, the flow between */
	int kernels = 0, copies = 0, orphans = 0, early = 0, late = 0, flows_ok = 0;
	double worst = 0;
	char bad[256] = "";
	cJSON_ArrayForEach(e, evs) {
		const char *cat = str(e, "cat");
		int kernel = !strcmp(cat, "kernel");
		if (!kernel && strcmp(cat, "memcpy") && strcmp(cat, "memset"))
			continue;
		kernel ? kernels++ : copies++;
		const cJSON *a = api_of(evs, arg(e, "correlation"));
		if (!a) {
			if (!orphans++)
				snprintf(bad, sizeof(bad), "%s (correlation %.0f) has no API call",
					 str(e, "name"), arg(e, "correlation"));
			continue;
		}
		double lag = num(e, "ts") - num(a, "ts");
		if (lag < 0 && !early++)
			snprintf(bad, sizeof(bad), "%s starts %.3f us before its %s",
				 str(e, "name"), -lag, str(a, "name"));
		if (lag > LAUNCH_WINDOW_US && !late++)
			snprintf(bad, sizeof(bad), "%s starts %.3f ms after its %s",
				 str(e, "name"), lag / 1000, str(a, "name"));
		if (kernel && lag > worst)
			worst = lag;
		struct step *s = step_at(num(a, "ts"));
		if (s) {
			if (kernel)
				s->kernels++;
			else if (!strcmp(str(e, "name"), "Memcpy HtoD"))
				s->htod += arg(e, "bytes");
			else if (!strcmp(str(e, "name"), "Memcpy DtoH"))
				s->dtoh += arg(e, "bytes");
		}
		/* the flow: an "f" at the work, an "s" with its id at the launch */
		const cJSON *f = NULL, *st = NULL, *x;
		cJSON_ArrayForEach(x, evs)
			if (!strcmp(str(x, "ph"), "f") && num(x, "pid") == num(e, "pid") &&
			    num(x, "tid") == num(e, "tid") && num(x, "ts") == num(e, "ts"))
				f = x;
		if (f)
			cJSON_ArrayForEach(x, evs)
				if (!strcmp(str(x, "ph"), "s") && num(x, "id") == num(f, "id"))
					st = x;
		if (st && num(st, "ts") >= num(a, "ts") &&
		    num(st, "ts") <= num(a, "ts") + num(a, "dur"))
			flows_ok++;
	}
	*kernels_out = kernels;
	result(gpu_procs > 0 && streams > 0 && kernels > 0,
	       "trace.json GPU tracks", "%d GPU process(es), %d stream track(s), %d kernels, "
	       "%d copies", gpu_procs, streams, kernels, copies);
	result(flows_ok == kernels + copies && kernels > 0, "trace.json flows",
	       "%d of %d kernels and copies have a flow from inside their launch call",
	       flows_ok, kernels + copies);
	if (!bad[0])
		snprintf(bad, sizeof(bad), "%s", kernels ? "" : "no kernels");
	if (!bad[0])
		snprintf(bad, sizeof(bad), "none before its launch call, the latest "
			 "%.3f ms after it", worst / 1000);
	result(kernels > 0 && !orphans && !early && !late, "kernels start after their launch",
	       "%s", bad);

	/* the program's own counts */
	double smi = -1;
	if (prog_out) {
		read_program(prog_out, &smi);
		int said = 0, kbad = 0, bbad = 0;
		char kwhy[256] = "", bwhy[256] = "";
		for (int i = 0; i < nsteps; i++) {
			struct step *s = &steps[i];
			if (!s->said)
				continue;
			said++;
			if (s->kernels != s->p_kernels && !kbad++)
				snprintf(kwhy, sizeof(kwhy), "step %d: %d kernels in the trace, "
					 "the program launched %d", s->n, s->kernels, s->p_kernels);
			if ((s->htod != s->p_htod || s->dtoh != s->p_dtoh) && !bbad++)
				snprintf(bwhy, sizeof(bwhy), "step %d: HtoD %.0f DtoH %.0f bytes "
					 "in the trace, the program copied %.0f and %.0f", s->n,
					 s->htod, s->dtoh, s->p_htod, s->p_dtoh);
		}
		if (said < nsteps)
			snprintf(kwhy, sizeof(kwhy), "the program printed counts for %d of the "
				 "%d recorded steps", said, nsteps);
		if (!nsteps)
			snprintf(kwhy, sizeof(kwhy), "no recorded steps");
		if (!bwhy[0] && (said < nsteps || !nsteps))
			snprintf(bwhy, sizeof(bwhy), "%s", kwhy);
		if (!kwhy[0]) {     /* "steps 2 3 4: 10 11 10 kernels, as ..." */
			size_t n = (size_t)snprintf(kwhy, sizeof(kwhy), "steps");
			for (int i = 0; i < nsteps && n < sizeof(kwhy); i++)
				n += (size_t)snprintf(kwhy + n, sizeof(kwhy) - n, " %d", steps[i].n);
			for (int i = 0; i < nsteps && n < sizeof(kwhy); i++)
				n += (size_t)snprintf(kwhy + n, sizeof(kwhy) - n, "%s%d",
						      i ? " " : ": ", steps[i].kernels);
			if (n < sizeof(kwhy))
				snprintf(kwhy + n, sizeof(kwhy) - n, " kernels, as the program "
					 "counted");
		}
		if (!bwhy[0]) {
			size_t n = (size_t)snprintf(bwhy, sizeof(bwhy), "steps");
			for (int i = 0; i < nsteps && n < sizeof(bwhy); i++)
				n += (size_t)snprintf(bwhy + n, sizeof(bwhy) - n, " %d", steps[i].n);
			for (int i = 0; i < nsteps && n < sizeof(bwhy); i++)
				n += (size_t)snprintf(bwhy + n, sizeof(bwhy) - n, "%s%.0f/%.0f",
						      i ? " " : ": ", steps[i].htod, steps[i].dtoh);
			if (n < sizeof(bwhy))
				snprintf(bwhy + n, sizeof(bwhy) - n, " bytes HtoD/DtoH, as the "
					 "program copied");
		}
		result(said == nsteps && nsteps && !kbad, "kernels per step", "%s", kwhy);
		result(said == nsteps && nsteps && !bbad, "HtoD/DtoH bytes per step", "%s", bwhy);

		/* NVML's device-wide used memory when query_smi ran */
		const cJSON *q = NULL;
		cJSON_ArrayForEach(e, evs)
			if (!strcmp(str(e, "ph"), "X") && !strcmp(str(e, "name"), "query_smi") &&
			    num(e, "pid") == host_pid)
				q = e;
		double used = -1, at = -1;
		if (q)
			cJSON_ArrayForEach(e, evs)
				if (!strcmp(str(e, "ph"), "C") && !strcmp(str(e, "name"), "cuda:0.used") &&
				    num(e, "ts") <= num(q, "ts") + num(q, "dur") && num(e, "ts") >= at) {
					at = num(e, "ts");
					used = arg(e, "value");
				}
		if (smi < 0 || !q || used < 0)
			result(0, "NVML used memory", "%s", smi < 0 ? "the program printed no "
			       "nvidia-smi reading" : !q ? "no query_smi slice in the trace" :
			       "no cuda:0.used counter before query_smi ended (memory poller off?)");
		else
			result(used / MIB - smi <= 1 && smi - used / MIB <= 1, "NVML used memory",
			       "NVML %.1f MiB, nvidia-smi %.0f MiB", used / MIB, smi);
	}
	cJSON_Delete(root);
}

/* ------------------------------------------------------------ report */

static double parse_time_us(const char *s)
{
	char *end;
	double v = strtod(s, &end);
	if (end == s)
		return -1;
	if (!strcmp(end, "s"))
		return v * 1e6;
	if (!strcmp(end, "ms"))
		return v * 1e3;
	if (!strcmp(end, "us"))
		return v;
	if (!strcmp(end, "ns"))
		return v / 1e3;
	return -1;
}

static void check_report(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[512];
	int in = 0, rows = 0, bad = 0;
	char why[256] = "";

	if (!f) {
		result(0, "host/GPU/idle split adds up to the step", "cannot open %s: %s", path,
		       strerror(errno));
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		char h[32], g[32], i[32];
		int n;
		if (strstr(line, "Step") && strstr(line, "Host") && strstr(line, "Idle")) {
			in = 1;
			continue;
		}
		if (!in || sscanf(line, "%d %31s %31s %31s", &n, h, g, i) != 4) {
			in = in && line[0] != '\n';
			continue;
		}
		rows++;
		struct step *s = step_num(n);
		double sum = parse_time_us(h) + parse_time_us(g) + parse_time_us(i);
		/* each figure is rounded to 4 digits */
		double tol = 2 + (s ? s->dur * 0.002 : 0);
		if ((!s || sum - s->dur > tol || s->dur - sum > tol) && !bad++)
			snprintf(why, sizeof(why), "step %d: host %s + GPU %s + idle %s = %.3f us, "
				 "the step lasted %.3f us", n, h, g, i, sum, s ? s->dur : -1);
	}
	fclose(f);
	if (rows != nsteps && !bad++)
		snprintf(why, sizeof(why), "%d rows in the report's per-step split, %d "
			 "recorded steps", rows, nsteps);
	if (!why[0])
		snprintf(why, sizeof(why), "%d steps, each within rounding", rows);
	if (!rows)
		snprintf(why, sizeof(why), "no per-step split in %s (no GPU activity?)", path);
	result(!bad && rows, "host/GPU/idle split adds up to the step", "%s", why);
}

/* ------------------------------------------------------------ Perfetto */

struct pb {
	const uint8_t *p, *end;
};

static int pb_varint(struct pb *b, uint64_t *v)
{
	*v = 0;
	for (int s = 0; s < 64 && b->p < b->end; s += 7) {
		uint8_t c = *b->p++;
		*v |= (uint64_t)(c & 0x7f) << s;
		if (!(c & 0x80))
			return 0;
	}
	return -1;
}

/* The next field of b: its number, wire type, and a varint value or the
 * bytes of a length-delimited or fixed field.  -1 at the end or on junk. */
static int pb_next(struct pb *b, unsigned *field, unsigned *wire, uint64_t *v, struct pb *sub)
{
	uint64_t key, len;
	if (b->p >= b->end || pb_varint(b, &key))
		return -1;
	*field = (unsigned)(key >> 3);
	*wire = key & 7;
	switch (*wire) {
	case 0:
		return pb_varint(b, v);
	case 1:
		len = 8;
		break;
	case 5:
		len = 4;
		break;
	case 2:
		if (pb_varint(b, &len))
			return -1;
		break;
	default:
		return -1;
	}
	if (len > (uint64_t)(b->end - b->p))
		return -1;
	sub->p = b->p;
	sub->end = b->p + len;
	b->p += len;
	return 0;
}

static int pb_is(const struct pb *s, const char *text)
{
	size_t n = strlen(text);
	return (size_t)(s->end - s->p) >= n && !memcmp(s->p, text, n);
}

static void check_perfetto(const char *run, int json_kernels)
{
	char path[4096];
	size_t len = 0;
	snprintf(path, sizeof(path), "%s/trace.perfetto-trace", run);
	char *data = slurp(path, &len);
	int gpu = 0, stream = 0, api = 0, kernels = 0, starts = 0, ends = 0, junk = 0;
	struct pb top = { (const uint8_t *)data, (const uint8_t *)data + len }, pkt, x, y;
	unsigned f, w;
	uint64_t v;

	if (!data || !len) {
		result(0, "Perfetto GPU tracks", "cannot read %s", path);
		result(0, "Perfetto flows", "cannot read %s", path);
		free(data);
		return;
	}
	while (top.p < top.end) {
		if (pb_next(&top, &f, &w, &v, &pkt)) {
			junk = 1;
			break;
		}
		if (f != 1 || w != 2)
			continue;
		while (pkt.p < pkt.end && !pb_next(&pkt, &f, &w, &v, &x)) {
			if (f == 60 && w == 2) {                /* TrackDescriptor */
				while (x.p < x.end && !pb_next(&x, &f, &w, &v, &y))
					if (f == 2 && w == 2) {  /* name */
						gpu += pb_is(&y, "GPU ");
						stream += pb_is(&y, "stream ");
						api += pb_is(&y, "CUDA API, thread ");
					}
			} else if (f == 11 && w == 2) {         /* TrackEvent */
				while (x.p < x.end && !pb_next(&x, &f, &w, &v, &y)) {
					starts += f == 47;
					ends += f == 48;
					kernels += f == 22 && w == 2 && (size_t)(y.end - y.p) == 6 &&
						   pb_is(&y, "kernel");
				}
			}
		}
	}
	free(data);
	if (junk)
		result(0, "Perfetto GPU tracks", "%s: not a protobuf trace", path);
	else
		result(gpu && stream && api && kernels == json_kernels && kernels,
		       "Perfetto GPU tracks", "%d GPU, %d stream and %d CUDA API track(s), "
		       "%d kernels (trace.json: %d)", gpu, stream, api, kernels, json_kernels);
	result(!junk && starts && starts == ends, "Perfetto flows",
	       "%d flow starts, %d flow ends", starts, ends);
}

/* ------------------------------------------------------------ main */

int main(int argc, char **argv)
{
	const char *prog = NULL, *report = NULL, *run = NULL;
	int kernels = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--label") && i + 1 < argc)
			label = argv[++i];
		else if (!strcmp(argv[i], "--steps") && i + 1 < argc)
			want_steps = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--program-output") && i + 1 < argc)
			prog = argv[++i];
		else if (!strcmp(argv[i], "--report") && i + 1 < argc)
			report = argv[++i];
		else if (argv[i][0] != '-' && !run)
			run = argv[i];
		else {
			fprintf(stderr, "usage: gpu-check [--label NAME] [--steps N] "
					"[--program-output FILE] [--report FILE] RUN_DIR\n");
			return 2;
		}
	}
	if (!run) {
		fprintf(stderr, "usage: gpu-check [--label NAME] [--steps N] "
				"[--program-output FILE] [--report FILE] RUN_DIR\n");
		return 2;
	}
	check_trace(run, prog, &kernels);
	if (report)
		check_report(report);
	check_perfetto(run, kernels);
	return failed > 100 ? 100 : failed;
}
