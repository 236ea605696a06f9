def clamp(x, lo=0, hi=55):
    return max(lo, min(hi, x))
