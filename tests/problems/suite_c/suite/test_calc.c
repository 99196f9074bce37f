/* test_calc.c: visible tests of add, sub and mul. */
#include "gavel_check.h"
#include "calc.h"

GV_TEST(adds)
{
	GV_CHECK_INT_EQ(add(2, 3), 5);
	GV_CHECK_INT_EQ(add(-1, 1), 0);
}

GV_TEST(subtracts)
{
	GV_CHECK_INT_EQ(sub(5, 3), 2);
	GV_CHECK(sub(3, 5) == -2);
}

GV_TEST(multiplies)
{
	GV_CHECK_INT_EQ(mul(4, 5), 20);
	GV_CHECK_INT_EQ(mul(7, 0), 0);
}
