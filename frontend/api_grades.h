/* Grades of an assignment for its course (classroom autograding): GET
 * /v1/assignments/{name}/grades (names of [A-Za-z0-9._-]) and GET
 * /v1/grades?assignment=<any label, URL-encoded>: per student labelled on
 * the caller's finished submissions of that assignment, the score (0..1)
 * of the latest one (?rule=latest, the default) or of the best
 * (?rule=best), its verdict, id and time, and how many the student has;
 * JSON, or CSV with ?format=csv or `Accept: text/csv`. Private to
 * frontend/. */
#pragma once

#include "frontend/server_internal.h"

/* assignment: the label from the path or the query (NULL: missing). */
void fe_handle_grades(struct fe_req *r, const char *assignment);
