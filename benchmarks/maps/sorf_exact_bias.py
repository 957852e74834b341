"""SORF's exact bias at d = p = 4: every one of the 4,096 sign draws (D1, D2, D3), built here from scipy's
Hadamard matrix (independent of rkcore's fast transform). Prints E K_SORF - exp(-gamma ||x - y||^2) at
x = e1, y = -e1, its median and 95th percentile over 20,000 uniformly random pairs of unit rows, and the worst
of 20,006 differences |x - y| <= 2 (the numbers in StructuredOrthogonalRandomFeatures' docstring).

Run: python benchmarks/maps/sorf_exact_bias.py  (about 20 s)
"""
import numpy as np, itertools
from scipy.linalg import hadamard
p = 4
H = hadamard(p) / np.sqrt(p)
signs = np.array(list(itertools.product([-1.0, 1.0], repeat=p)))
Ws = []
for D1 in signs:
    for D2 in signs:
        for D3 in signs:
            Ws.append(np.sqrt(p) * H @ np.diag(D3) @ H @ np.diag(D2) @ H @ np.diag(D1))
W = np.concatenate(Ws)  # (4096 * 4, 4): every row of every draw, equally likely
print("distinct rows", len(np.unique(np.round(W, 12), axis=0)), "row norms", np.unique(np.round(np.linalg.norm(W, axis=1), 12)))
def sorf_mean(delta, gamma):
    s = np.sqrt(2 * gamma)
    out = []
    for chunk in np.array_split(delta, max(1, len(delta) // 500)):
        out.append(np.cos(s * chunk @ W.T).mean(axis=1))
    return np.concatenate(out)
for gamma in (0.5, 1.0):
    e1 = np.eye(4)[0]
    d = (e1 - (-e1))[None]
    print(f"gamma={gamma}: x=e1,y=-e1: E K_SORF={sorf_mean(d, gamma)[0]:.4f} K={np.exp(-gamma*4):.4f} bias={sorf_mean(d, gamma)[0]-np.exp(-gamma*4):.4f}")
    rng = np.random.default_rng(0)
    X = rng.standard_normal((20000, 4)); X /= np.linalg.norm(X, axis=1, keepdims=True)
    Y = rng.standard_normal((20000, 4)); Y /= np.linalg.norm(Y, axis=1, keepdims=True)
    delta = X - Y
    bias = np.abs(sorf_mean(delta, gamma) - np.exp(-gamma * (delta**2).sum(1)))
    print(f"  uniform unit pairs (20,000): median {np.median(bias):.4f} p95 {np.percentile(bias,95):.4f} max {bias.max():.4f}")
    # the worst pair: search |delta| <= 2 over many directions and lengths
    dirs = rng.standard_normal((20000, 4)); dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
    lens = rng.uniform(0, 2, (20000, 1)); lens[:5000] = 2.0
    delta = np.concatenate([dirs * lens, 2 * np.eye(4), 2 * np.vstack([np.ones(4) / 2, [1/np.sqrt(2), 1/np.sqrt(2), 0, 0]])])
    bias = np.abs(sorf_mean(delta, gamma) - np.exp(-gamma * (delta**2).sum(1)))
    k = bias.argmax()
    print(f"  worst over 20,006 differences |x - y| <= 2: {bias.max():.4f} at delta={np.round(delta[k],3)}")
