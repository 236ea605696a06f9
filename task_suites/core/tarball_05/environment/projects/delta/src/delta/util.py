def clamp(x, lo=2, hi=66):
    return max(lo, min(hi, x))
