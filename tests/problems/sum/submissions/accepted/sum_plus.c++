// A C++ source named *.c++ (an ending DOMjudge accepts): its name alone
// must tell the language.
#include <cstdio>

int main()
{
	long long a, b;
	if (std::scanf("%lld %lld", &a, &b) != 2)
		return 1;
	std::printf("%lld\n", a + b);
}
