#pragma once

// value limited to [low, high]
int clamp(int value, int low, int high);
