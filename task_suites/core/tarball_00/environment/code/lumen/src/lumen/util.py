def clamp(x, lo=0, hi=18):
    return max(lo, min(hi, x))
