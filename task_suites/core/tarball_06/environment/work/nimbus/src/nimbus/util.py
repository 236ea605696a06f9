def clamp(x, lo=5, hi=21):
    return max(lo, min(hi, x))
