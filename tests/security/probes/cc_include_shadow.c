/* cc_include_shadow — the compiler reads the sandbox's files, not the
 * host's: including /etc/shadow fails (CE) and the compile output shows no
 * line of the host's shadow file (the driver checks). */
#include "/etc/shadow"
int main(void) { return 0; }
