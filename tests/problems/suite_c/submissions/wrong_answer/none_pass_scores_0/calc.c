/* Every function is wrong (but it compiles): no test passes. */
#include "calc.h"

int add(int a, int b)
{
	return a - b + 1;
}

int sub(int a, int b)
{
	return a + b;
}

int mul(int a, int b)
{
	return a + b;
}

long long factorial(int n)
{
	return n;
}
