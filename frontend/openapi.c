/* The OpenAPI 3 document of the native API (frontend/openapi.json), served
 * by GET /v1/openapi.json: the file is embedded in the binary at build
 * time, NUL-terminated, so the server reads nothing at run time and the
 * document is edited as JSON. tests/integration/test_frontend_api.sh checks
 * that every route and status it documents is answered as documented;
 * tests/integration/test_openapi.sh lints it with @redocly/cli. Edit it
 * together with the handlers. */
#include "frontend/server_internal.h"

/* .incbin resolves the path from the compiler's working directory: the
 * Makefile builds from the repository root. */
__asm__(".section .rodata\n"
	".global fe_openapi_json\n"
	".type fe_openapi_json, @object\n"
	".balign 16\n"
	"fe_openapi_json:\n"
	".incbin \"frontend/openapi.json\"\n"
	".byte 0\n"
	".size fe_openapi_json, . - fe_openapi_json\n"
	".previous\n");
