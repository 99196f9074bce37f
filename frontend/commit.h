/* Group commit of submission INSERTs (commit.c). Private to frontend/. */
#pragma once

#include <stdbool.h>

#include "frontend/server_internal.h"

struct fe_store;

/* The outcome of a submission's INSERT, on its own worker's thread: rows
 * is the number of rows stored (-1 when it did not run), error NULL or why
 * the transaction failed; unavailable: it could not be sent. */
typedef void (*fe_store_done_fn)(struct fe_req *r, int rows, const char *error, bool unavailable);

/* The INSERT of text (a JSON array of {id, language, request}, taken) for
 * r's tenant, within its max_queued quota; done runs once with the
 * outcome. NULL when out of memory (text freed). */
struct fe_store *fe_store_new(struct fe_req *r, char *text, fe_store_done_fn done);
void fe_store_free(struct fe_store *it);
/* Takes it (and the reference it holds on its request): queues it on
 * worker 0 and wakes that worker. */
void fe_store_submit(struct fe_worker *w, struct fe_store *it);
/* Fails the submissions waiting for a group commit (shutdown). */
void fe_store_abort(struct fe_worker *w);
