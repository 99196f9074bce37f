#include "greet.h"

const char *greeting(void)
{
	return "Hello, World!";
}
