// Sleeps 3 s under a 1 s time limit, then answers right: TLE.
#include <chrono>
#include <iostream>
#include <thread>

int main()
{
	long long n;
	std::cin >> n;
	std::this_thread::sleep_for(std::chrono::seconds(3));
	std::cout << n + 1 << "\n";
}
