#include <no_such_header.hpp>

int main() {}
