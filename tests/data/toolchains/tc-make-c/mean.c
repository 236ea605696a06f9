#include <stdio.h>

int main(void) {
    long sum = 0, count = 0, value;
    while (scanf("%ld", &value) == 1) {
        sum += value;
        count++;
    }
    if (count == 0) {
        fprintf(stderr, "no numbers\n");
        return 1;
    }
    printf("%.2f\n", (double)(sum / count));
    return 0;
}
