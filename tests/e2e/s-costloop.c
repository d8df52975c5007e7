/*
 * s-costloop.c - fixture: a trainer whose step is one cost function that
 * loops over a hot inner operator, after a data-reading prologue long
 * enough to fill a small trace cap (the shape that made `stepscope steps`
 * propose the operator: issue 40, item 2).
 *
 *   s-costloop ITERS OPS READS UPDATE [LAYERS]
 *
 *   main
 *     read_data(READS)           READS x parse_token
 *     ITERS x
 *       cost                     the step: OPS x node_op (spins 1 us each)
 *       update                   only when UPDATE is 1: once per iteration
 *       layer_norm               LAYERS x (default 0), called by main
 *                                itself: a loop inside the iteration
 *
 * node_op spins on the clock, so the training loop's time is fixed by
 * ITERS x OPS, never by the machine's load, and far above the prologue's.
 * Functions: main, read_data, parse_token, cost, node_op, update,
 * layer_norm.
 */
#include <stdlib.h>
#include <time.h>

#include "fixture.h"

DEFINE_SINK;

NOINLINE long parse_token(long i)
{
	return SINK(i), i & 7;
}

NOINLINE void read_data(long n)
{
	for (long i = 0; i < n; i++)
		parse_token(i);
}

NOINLINE void node_op(long i)
{
	SPIN_US(1);
	SINK(i);
}

NOINLINE void cost(long ops)
{
	for (long i = 0; i < ops; i++)
		node_op(i);
}

NOINLINE void update(long it)
{
	SINK(it);
}

NOINLINE void layer_norm(long l)
{
	SPIN_US(20);
	SINK(l);
}

int main(int argc, char **argv)
{
	long iters = argc > 1 ? atol(argv[1]) : 20, ops = argc > 2 ? atol(argv[2]) : 1000;
	long reads = argc > 3 ? atol(argv[3]) : 100000, upd = argc > 4 ? atol(argv[4]) : 0;
	long layers = argc > 5 ? atol(argv[5]) : 0;

	read_data(reads);
	for (long it = 0; it < iters; it++) {
		cost(ops);
		if (upd)
			update(it);
		for (long l = 0; l < layers; l++)
			layer_norm(l);
	}
	return 0;
}
