#include <iostream>

// Uses int: overflows on the large secret case.
int main()
{
	int a, b;
	std::cin >> a >> b;
	std::cout << a + b << '\n';
}
