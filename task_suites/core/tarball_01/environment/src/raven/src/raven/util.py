def clamp(x, lo=0, hi=56):
    return max(lo, min(hi, x))
