/* test_hidden.c: hidden test of factorial. GAVEL-HIDDEN-C-7f3a */
#include "gavel_check.h"
#include "calc.h"

GV_TEST(factorial)
{
	GV_CHECK_INT_EQ(factorial(0), 1);
	GV_CHECK_INT_EQ(factorial(20), 2432902008176640000LL);
}
