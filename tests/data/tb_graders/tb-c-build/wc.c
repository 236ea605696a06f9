#include <ctype.h>
#include <stdio.h>

int main(void) {
    long lines = 0, words = 0;
    int c, in_word = 0;
    while ((c = getchar()) != EOF) {
        if (c == '\n')
            lines++;
        if (isspace(c)) {
            in_word = 0;
        } else {
            in_word = 1;
            words++;
        }
    }
    printf("%ld %ld\n", lines, words);
    return 0;
}
