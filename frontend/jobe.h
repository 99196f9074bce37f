/* The Jobe routes under /jobe/index.php/restapi/ (jobe.c). Private to
 * frontend/. */
#pragma once

#include "frontend/server_internal.h"

/* Every FE_ROUTE_JOBE_* route. */
void fe_handle_jobe(struct fe_req *r);
