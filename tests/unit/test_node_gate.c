/* The bounds a kernel node puts on its workers (executor/daemon/node_gate.c):
 * never more places held than allowed, each gate apart, a place given back
 * by its holder or freed with a dead worker's slot. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "executor/daemon/daemon_internal.h"

#define WORKERS 3

static void gate__places__bound_each_gate_apart(void **state)
{
	(void)state;
	struct daemon d;
	memset(&d, 0, sizeof(d));
	volatile sig_atomic_t stop = 0;
	d.stop = &stop;
	d.workers = WORKERS;
	d.slots = calloc(WORKERS, sizeof(*d.slots));
	assert_non_null(d.slots);
	struct worker w[WORKERS];
	memset(w, 0, sizeof(w));
	for (int k = 0; k < WORKERS; k++)
		w[k].d = &d, w[k].index = k;

	assert_true(exec_gate_take(&w[0], EXEC_GATE_PG, 2, 0));
	assert_true(exec_gate_take(&w[1], EXEC_GATE_PG, 2, 0));
	assert_false(exec_gate_take(&w[2], EXEC_GATE_PG, 2, 0)); /* both places held */
	assert_false(exec_gate_take(&w[2], EXEC_GATE_PG, 2, 60));  /* nor after a wait */
	/* The other gate is apart. */
	assert_true(exec_gate_take(&w[2], EXEC_GATE_START, 1, 0));
	assert_false(exec_gate_take(&w[0], EXEC_GATE_START, 1, 0));
	/* Given back, the place is taken again. */
	exec_gate_give(&w[0], EXEC_GATE_PG);
	assert_true(exec_gate_take(&w[2], EXEC_GATE_PG, 2, 0));
	/* A worker that died: the supervisor clears its slot for the next one,
	 * and its places go with it. */
	memset(&d.slots[1], 0, sizeof(d.slots[1]));
	assert_true(exec_gate_take(&w[0], EXEC_GATE_PG, 2, 0));
	memset(&d.slots[2], 0, sizeof(d.slots[2]));
	assert_true(exec_gate_take(&w[0], EXEC_GATE_START, 1, 0));
	/* w[2]'s PG place went with its slot too: one is free. Giving one
	 * not held changes nothing: the bound still holds after. */
	exec_gate_give(&w[2], EXEC_GATE_PG);
	assert_true(exec_gate_take(&w[1], EXEC_GATE_PG, 2, 0));
	assert_false(exec_gate_take(&w[2], EXEC_GATE_PG, 2, 0));
	/* A stopping worker waits no longer for a place. */
	stop = 1;
	assert_false(exec_gate_take(&w[2], EXEC_GATE_PG, 2, 10000));
	free(d.slots);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(gate__places__bound_each_gate_apart),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
