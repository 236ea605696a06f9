#include "clamp.h"

int clamp(int value, int low, int high) {
    if (value < low || value > high) {
        return low;
    }
    return value;
}
