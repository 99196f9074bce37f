/* cc_include_zero — the compiler is tenant-controlled input too: including
 * an endless device must end in a compile error (CE) at the compile limits,
 * quickly, without hanging or exhausting the host. */
#include "/dev/zero"
int main(void) { return 0; }
