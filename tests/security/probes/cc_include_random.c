/* cc_include_random — as cc_include_zero, with an endless stream of random
 * bytes: CE within the compile limits. */
#include "/dev/random"
int main(void) { return 0; }
