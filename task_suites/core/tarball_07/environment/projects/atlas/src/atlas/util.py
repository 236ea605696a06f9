def clamp(x, lo=2, hi=31):
    return max(lo, min(hi, x))
