def clamp(x, lo=1, hi=71):
    return max(lo, min(hi, x))
