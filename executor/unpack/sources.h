/* The files a compile command's "{sources}" names once a submission's
 * archive is unpacked (languages/lang.h, lang_vars.sources_in_sandbox):
 * run by gavel-unpack inside the sandbox, after unpack_extract. */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* Relative paths of the regular files under root (not through links,
 * at most max_depth folders deep, names not starting with '.') that end
 * in one of endings (comma-separated, e.g. ".c" or ".cpp,.cc"), but the
 * top-level main_name, sorted (strcmp): *out (NULL-terminated, each
 * malloc'd; free with unpack_sources_free), *n of them. -1 with a reason
 * on stderr when more than max_files match or a folder cannot be read. */
int unpack_sources_list(int root, const char *endings, const char *main_name, uint32_t max_depth,
			uint32_t max_files, char ***out, size_t *n);
void unpack_sources_free(char **list);
