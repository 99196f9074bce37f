// One vector of 16 GiB, value-initialised: where the allocation is refused
// std::bad_alloc aborts the program (SIGABRT), where it is granted the
// zeroing touches every page. MLE either way.
#include <iostream>
#include <vector>

int main()
{
	long long n;
	std::cin >> n;
	std::vector<long long> v(2000000000LL, n);
	std::cout << v[n] + 1 << "\n";
}
