#include <cstdio>
#include <cstring>
#include "clamp.h"

// checks NAME: exit 0 when the named check holds.
int main(int argc, char **argv) {
    if (argc != 2) return 2;
    const char *name = argv[1];
    if (!strcmp(name, "inside")) return clamp(5, 0, 10) == 5 ? 0 : 1;
    if (!strcmp(name, "below")) return clamp(-3, 0, 10) == 0 ? 0 : 1;
    if (!strcmp(name, "above")) return clamp(42, 0, 10) == 10 ? 0 : 1;
    std::fprintf(stderr, "no check %s\n", name);
    return 2;
}
