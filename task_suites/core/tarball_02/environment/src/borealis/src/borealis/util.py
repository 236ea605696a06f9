def clamp(x, lo=1, hi=64):
    return max(lo, min(hi, x))
