/*
 * s-names-dl.c - library for s-names, loaded with dlopen and closed before
 * the program ends: its functions must still be named from the recorded
 * maps.  dl_entry calls dl_inner DL_CALLS times so that, recorded with
 * buffer_kb=64 (4096 events a chunk), a chunk fills while the library is
 * loaded: the runtime snapshots the maps when it takes a new chunk.
 * "L:" markers give the expected lines.
 */
#define DL_CALLS 3000
static __attribute__((noinline)) int dl_inner(int x) /* L:dl_inner */
{
	__asm__ volatile("" ::: "memory");
	return x + 7;
}

__attribute__((visibility("default"))) int dl_entry(int x) /* L:dl_entry */
{
	int s = 0;

	for (int i = 0; i < DL_CALLS; i++)
		s += dl_inner(x + i);
	return s;
}
