// A compile that never ends in time: every (N, M, K) triple instantiates its
// own struct, about 2.7 million of them, so the compile time limit (or the
// compile memory limit) stops it and compile_output says which.
template <int N, int M, int K> struct A {
	static constexpr long v = (A<N - 1, M, K>::v + A<N, M - 1, K>::v + A<N, M, K - 1>::v) % 1000003;
};
template <int M, int K> struct A<0, M, K> { static constexpr long v = 1; };
template <int N, int K> struct A<N, 0, K> { static constexpr long v = 1; };
template <int N, int M> struct A<N, M, 0> { static constexpr long v = 1; };
int main() { return (int)(A<140, 140, 140>::v & 1); }
