/* The main file is fine; this one does not compile, so neither does the
 * program: the other files are really compiled with it. */
#include "greet.h"

const char *greeting(void)
{
	return "Hello, World!"
}
