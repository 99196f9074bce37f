// push_back until the vector can grow no more: MLE.
#include <iostream>
#include <vector>

int main()
{
	long long n;
	std::cin >> n;
	std::vector<long long> v;
	for (long long i = 0;; i++) {
		v.push_back(i + n);
		if (v.size() == (1ULL << 40))
			break;
	}
	std::cout << v.size() << "\n";
}
