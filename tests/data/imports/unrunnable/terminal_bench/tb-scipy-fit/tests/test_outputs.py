from pathlib import Path

import numpy as np
from scipy import stats


def test_fit():
    slope, intercept = map(float, Path("/app/fit.txt").read_text().split())
    data = np.loadtxt("/app/points.csv", delimiter=",", skiprows=1)
    fit = stats.linregress(data[:, 0], data[:, 1])
    assert abs(slope - fit.slope) < 1e-6 and abs(intercept - fit.intercept) < 1e-6
