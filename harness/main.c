/* main.c: the decbench command line (placeholder until the CLI lands). */
#include <stdio.h>
int main(void) {
    fprintf(stderr, "decbench: not built yet\n");
    return 1;
}
