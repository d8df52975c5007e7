/*
 * hooks.c - the hot path: __cyg_profile_func_enter/exit, called by every
 * function compiled with -finstrument-functions, and the public stepscope_*
 * API of stepscope.h.
 *
 * Common case inside an active window: read the clock, store one 16-byte
 * event in the thread's mapped chunk, bump a pointer.  No lock, no malloc,
 * no stdio, no syscall; errno is untouched.  Outside a window: one compare
 * against the step function and one test of the gate.  Everything rarer
 * (a full chunk, a step boundary) is in a separate non-inlined function.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

SS_EXPORT void __cyg_profile_func_enter(void *fn, void *site)
{
	(void)site;
	if (ss_unlikely(fn == ss_hot.watch))
		ss_window_on_enter();
	if (ss_hot.gate)
		ss_emit(SS_EV_WORD(SS_EV_ENTER, (uintptr_t)fn));
}

SS_EXPORT void __cyg_profile_func_exit(void *fn, void *site)
{
	(void)site;
	if (ss_hot.gate)
		ss_emit(SS_EV_WORD(SS_EV_EXIT, (uintptr_t)fn));
	if (ss_unlikely(fn == ss_hot.watch))
		ss_window_on_exit();
}

SS_EXPORT void stepscope_step(void)
{
	ss_window_api_step();
}

SS_EXPORT int stepscope_recording(void)
{
	return ss_hot.gate;
}

/* ---------------------------------------------------------------- ranges
 * Range names are interned by content: a lock-free open-addressing table
 * of copies, each published once with its id (SS_META_STRING). */
#define STR_SLOTS 1024

struct str_slot {
	_Atomic(const char *) text;
	uint64_t hash;
	uint64_t id;
};
static struct str_slot str_table[STR_SLOTS];

static uint64_t str_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static uint64_t string_id(const char *name)
{
	uint64_t h = str_hash(name);
	for (unsigned i = 0; i < STR_SLOTS; i++) {
		struct str_slot *s = &str_table[(h + i) % STR_SLOTS];
		const char *text = atomic_load_explicit(&s->text, memory_order_acquire);
		if (!text) {
			/* not there: add it under the lock */
			uint64_t id = 0;
			pthread_mutex_lock(&ss_rt.lock);
			text = atomic_load_explicit(&s->text, memory_order_acquire);
			if (!text) {
				char *copy = strdup(name);
				if (copy) {
					id = ++ss_rt.next_str;
					s->hash = h;
					s->id = id;
					ss_meta_write(SS_META_STRING, &id, sizeof(id), copy,
						      strlen(copy) + 1);
					atomic_store_explicit(&s->text, copy,
							      memory_order_release);
				}
			}
			pthread_mutex_unlock(&ss_rt.lock);
			if (!text)
				return id;
		}
		if (s->hash == h && !strcmp(text, name))
			return s->id;
	}
	return 0; /* table full: shows as an unnamed range */
}

SS_EXPORT void stepscope_range_push(const char *name)
{
	struct ss_thread *t = &ss_tls;
	if (ss_rt.dormant || t->in_slow || !name)
		return;
	uint64_t id = 0;
	if (ss_hot.gate) {
		t->in_slow = 1;
		id = string_id(name);
		t->in_slow = 0;
	}
	if (t->range_depth < SS_RANGE_DEPTH)
		t->range_ids[t->range_depth] = id;
	t->range_depth++;
	if (ss_hot.gate && id)
		ss_emit(SS_EV_WORD(SS_EV_RANGE_PUSH, id));
}

SS_EXPORT void stepscope_range_pop(void)
{
	struct ss_thread *t = &ss_tls;
	if (ss_rt.dormant || t->in_slow || !t->range_depth)
		return;
	t->range_depth--;
	uint64_t id = t->range_depth < SS_RANGE_DEPTH ? t->range_ids[t->range_depth] : 0;
	if (ss_hot.gate && id)
		ss_emit(SS_EV_WORD(SS_EV_RANGE_POP, id));
}
