// An uncaught exception that is not about memory: abort (SIGABRT), RE.
#include <iostream>
#include <stdexcept>

int main()
{
	long long n;
	std::cin >> n;
	if (n > 0)
		throw std::runtime_error("not a memory problem");
	std::cout << n + 1 << "\n";
}
